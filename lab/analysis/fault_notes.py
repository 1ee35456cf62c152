"""The notes a fault's figures can carry (lab/analysis/failover.py writes them into
FaultFigures.note), each with the short code the printed fault table shows in its place:
a table row stays one line, and the sentence goes to faults.csv and the report page."""

from __future__ import annotations

NO_DATA = "no data was sent during the fault"
KEPT_SENDING = "crossing routes kept sending"
NOT_CROSSED = "no route that carried data crosses it"
AFTER_THE_END = "repaired after the last data was sent"
STILL_DOWN = "its routes stayed down under another fault"
NOT_T0T1 = "routing withdraws T0-T1 links only"
NO_WITHDRAWAL = "routing withdrew nothing: the rails through it stalled until the repair"
NO_RECORDS = "no route records in the agents' stats"

# ten characters at most: the table's last column
CODES = {NO_DATA: "no-data", KEPT_SENDING: "kept-going", NOT_CROSSED: "unused",
         AFTER_THE_END: "after-end", STILL_DOWN: "still-down", NOT_T0T1: "not-t0t1",
         NO_WITHDRAWAL: "no-reroute", NO_RECORDS: "no-records"}
OTHER = "other"   # a note this version does not know (a summary.json written by another)


def note_code(note) -> str:
    """The short code of a fault's note; "" for none."""
    if not note:
        return ""
    return CODES.get(note, OTHER) if isinstance(note, str) else OTHER
