"""Make untrusted text (command output, handler output, provider messages) safe for a terminal.

A task's output may carry escape sequences that retitle the window, clear the screen, move the
cursor or write hyperlinks; none of that may reach the user's terminal through rig. Colour
(SGR, ``ESC [ ... m``) is kept only where colour is wanted: a terminal without NO_COLOR.
"""

from __future__ import annotations

from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: rig ls answered from the cache sanitizes its cells and imports no re unless a cell
# holds an escape sequence; mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False


if TYPE_CHECKING:
    import re
else:
    re = lazy_module("re")


# Compiled on first use (by re's own cache): most commands never meet an escape sequence.
_CONTROL = r"""
      \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?      # OSC: window title, hyperlinks, clipboard (BEL or ST)
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?           # DCS, SOS, PM, APC strings
    | (?P<csi>(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~])  # CSI: colour, cursor moves, erase, modes
    | \x1b[ -/]*[0-~]?                        # any other escape
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]           # C0 and C1 controls but tab and newline (and CR)
    """


# Deletes every C0/C1 control but tab and newline. str.translate is the cheapest scan Python has
# (a 64 KiB chunk in tens of microseconds, where a regex takes hundreds), and most output has
# nothing to strip; the regex runs only when an escape sequence needs its parameters removed too.
_BARE_CONTROLS = str.maketrans("", "", "".join(map(chr, [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)])))


def _keep_colour(match: re.Match[str]) -> str:
    csi = match.group("csi")
    return csi if csi is not None and csi.endswith("m") and csi.startswith("\x1b[") else ""


# ASCII text can only hold these of the controls above. A membership test is a memchr, ~20x
# cheaper than translate's pass, and 31 of them still ~5x: MiB chunks of command output are checked
# with them, where the per-call overhead is nothing; short strings keep the single translate.
_ASCII_CONTROLS = tuple(map(chr, [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]))
_SCAN_FROM = 16 * 1024


def sanitize(text: str, *, colour: bool = False) -> str:
    """``text`` with every control sequence removed, except SGR colour when ``colour``."""
    if len(text) >= _SCAN_FROM and text.isascii() and not any(control in text for control in _ASCII_CONTROLS):
        return text
    stripped = text.translate(_BARE_CONTROLS)
    if len(stripped) == len(text):
        return text
    if "\x1b" not in text and "\x9b" not in text:
        return stripped  # only bare controls (BEL, CR, ...), and they are gone

    return re.sub(_CONTROL, _keep_colour if colour else "", text, flags=re.VERBOSE)


__all__ = ["sanitize"]
