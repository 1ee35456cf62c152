"""The operating system as every layer of the lab uses it: system tools run with a timeout
(commands.py), network namespaces entered (netns.py), a lab process started and stopped
(child_process.py), polling until something holds (waiting.py), files written atomically
(atomic.py) and the clock timers run on, real or manual (clock.py). Nothing here knows a fabric."""
