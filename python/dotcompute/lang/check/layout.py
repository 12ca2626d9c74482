"""The check context: one int64 array shared by the instrumented kernel and the Python side.

The generated checking helpers (printer.py) and the launch (runner.py) agree on these offsets.
Everything lives in one array so the checked kernel takes a single extra argument (the slot that
debug mode's report buffer uses) and device functions reach it through the same hidden parameter.

    [0]  lock           the checked entry runs one call at a time (shadow state is not thread-safe)
    [1]  stored         finding records written so far
    [2]  capacity       finding records that fit
    [3]  mask           enabled checks (CHECK_BITS)
    [4]  tid            current work-item: linear global id
    [5]  li             current work-item: linear local id
    [6]  group          current work-group: linear group id
    [7]  nslots         memory regions in the slot table
    [8]  dropped        distinct findings that did not fit
    [9..11] global size
    [12] bar            offset of the per-item barrier counters
    [13] max_items      how many counters there are
    [14] ret_line       synccheck: the line of the first ``return`` an item of the current group took
    [15] ret_tid        ... and that item's linear global id
    [16..26] pending    a write-write conflict held until the store is done: two items storing the same
                        value (``flag[0] = 1`` from every item) is not reported
    SLOTS: per region [shadow offset, elements, base address (set by the kernel), element bytes]
    FINDINGS: per record REC words (see FIELDS)
    then the barrier counters, then the shadow words (SHADOW per element).
"""

from __future__ import annotations

CHECK_BITS = {"memcheck": 1, "racecheck": 2, "synccheck": 4, "initcheck": 8}
ALL_CHECKS = tuple(CHECK_BITS)

H_LOCK, H_STORED, H_CAP, H_MASK, H_TID, H_LI, H_GROUP, H_NSLOTS, H_DROPPED = range(9)
H_GS = 9
H_BAR, H_MAX_ITEMS, H_RET_LINE, H_RET_TID = 12, 13, 14, 15
#: a write-write race waiting for its store: reported only if the stored value differs (words 16..26)
H_PEND = 16
SLOTS = 32
SLOT_WORDS = 4
MAX_SLOTS = 48
FINDINGS = SLOTS + SLOT_WORDS * MAX_SLOTS
REC = 12
CAPACITY = 64
#: shadow words per element: writer, writer's interval, reader, reader's interval, second reader, written
SHADOW = 6

# record fields
F_KIND, F_SUB, F_ID, F_LINE, F_TID, F_OTID, F_OLINE, F_I0, F_I1, F_I2, F_NDIM, F_COUNT = range(REC)

KIND_NAMES = {1: "memcheck", 2: "racecheck", 3: "synccheck", 4: "initcheck"}
# racecheck: which access came first; synccheck: which group-level construct diverged
RACE_SUB = {1: "write-write", 2: "read-write", 3: "read-write"}
SYNC_SUB = {1: "if", 2: "for", 3: "while", 4: "break", 5: "continue", 6: "return"}
