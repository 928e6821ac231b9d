"""Text a reader is shown: the characters that drive a terminal or hide what it shows.

A record is text from whoever pushed it. ESC and OSC sequences drive the terminal that
prints them; bidirectional overrides, isolates and zero-width characters do not, but they
reorder or hide what a reader sees ("Trojan Source", CVE-2021-42574): a decision titled
`\\u202edetcejer` reads "rejected". The terminal (`cli.output.visible`) and the site
(`site.escape`) both show them escaped, from the one definition here.
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, and C1 controls (CSI, OSC...): what drives a terminal.
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Bidi marks, embeddings, overrides and isolates, zero-width characters and the BOM.
INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def show_invisible(text: str) -> str:
    """`text` with every bidi control and zero-width character written as its escape (`\\u202e`)."""
    if not INVISIBLE.search(text):
        return text
    return INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def show_controls(text: str) -> str:
    """`text` with every terminal control character written as its escape (`\\x1b`)."""
    return CONTROLS.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
