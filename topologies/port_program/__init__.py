"""The switch port program and what drives the ports' queues (docs/port-program.md): the eBPF
program every switch port runs (port_program.c, built by build_bpf.sh), its loader and manager
(port_program.py), its maps from user space (port_maps.py), the shapers every port gets
(shaping.py), and the lossless mode's pauses (lossless.py decides, pause_controller.py holds the
ports, tc_netlink.py replays the qdisc changes). It imports neither data-plane package."""
