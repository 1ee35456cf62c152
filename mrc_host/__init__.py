"""MRC host agent: sans-IO protocol core (MRC and baseline), socket adapter, scapy layer."""
