"""Session plumbing: one lab at a time (lock), the controller process, the
fabric session torn down whatever happens, cleanup after a crash, atomic files."""
