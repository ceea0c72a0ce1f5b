"""Who a parser runs as, and what it cannot reach of the worker.

- The worker hides itself: `hide_process()` turns `PR_SET_DUMPABLE` off, so a
  process of its user (a parser that stayed the worker's user) can neither read
  its `/proc/<pid>/environ`, `mem` or `fd/` nor attach to it. The parser server
  and its parsers are hidden the same way from each other.
- The parsers run as another user whenever the worker can switch (root, or
  `CAP_SETUID` and `CAP_SETGID` it keeps across exec): `INGESTION_PARSER_USER`, by
  default `curator-parser` if it exists, else `nobody`. The parser server takes
  that user in `drop_privileges()` once it has imported the parsing libraries (so
  an interpreter other users cannot read still works) and before it forks any
  parser: no groups, no capabilities, and no exec can give any back.
- `readable_by()` tells from the permission bits whether that user can read a
  file of the worker's (the database, the originals): the start-up check.

Linux only where it says so; elsewhere the calls do nothing and say so.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

DEDICATED_USER = "curator-parser"
FALLBACK_USER = "nobody"
# <linux/prctl.h>, <linux/capability.h>
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
CAP_SETGID, CAP_SETUID = 6, 7
_SWITCHING = 1 << CAP_SETGID | 1 << CAP_SETUID
_LINUX = sys.platform.startswith("linux")


class SandboxError(Exception):
    """The parser sandbox cannot be set up as configured (a deployment error)."""


@dataclass(frozen=True)
class Account:
    """The user parsers run as."""

    name: str
    uid: int
    gid: int
    home: str


def _prctl(option: int, value: int = 0, extra: int = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, value, extra, 0, 0)


def hide_process() -> bool:
    """Make this process non-dumpable (Linux): processes of its user can no longer
    read its memory, environment or descriptors through /proc, nor ptrace it.
    False where that cannot be done."""
    return _LINUX and _prctl(_PR_SET_DUMPABLE, 0) == 0


def is_hidden() -> bool:
    """Whether this process is non-dumpable (always False off Linux)."""
    return _LINUX and _prctl(_PR_GET_DUMPABLE) == 0


def forbid_new_privileges() -> None:
    """No exec of this process or its children gains privileges (setuid programs,
    file capabilities): a parser cannot become root again through `su` (Linux)."""
    if _LINUX:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def capabilities(status: str | None = None) -> dict[str, int] | None:
    """The capability sets of this process (`CapEff`, `CapAmb`, ...) from
    /proc/self/status (or `status`, its text); None where there is none."""
    if status is None:
        try:
            status = Path("/proc/self/status").read_text()
        except OSError:
            return None
    return {
        name: int(value, 16)
        for name, _, value in (line.partition(":\t") for line in status.splitlines())
        if name.startswith("Cap")
    }


def can_switch_users(caps: dict[str, int] | None = None) -> bool:
    """Whether the parser server, which the worker execs, may change its user:
    root keeps what its bounding set allows; another user only its ambient
    capabilities (what `AmbientCapabilities=` of systemd gives)."""
    if not hasattr(os, "geteuid"):
        return False
    caps = capabilities() if caps is None else caps
    if os.geteuid() == 0:
        return caps is None or caps.get("CapBnd", 0) & _SWITCHING == _SWITCHING
    return caps is not None and caps.get("CapAmb", 0) & _SWITCHING == _SWITCHING


def _lookup(user: str):
    try:
        import pwd

        return pwd.getpwnam(user)
    except (ImportError, KeyError):
        return None


def parser_account(user: str) -> Account | None:
    """The account parsers run as, None to stay the worker's user; SandboxError if
    the setting cannot be followed. An empty `user` means the dedicated user, or
    `nobody`, whenever the worker can switch users (and staying otherwise)."""
    if not user:
        if not can_switch_users():
            return None
        for candidate in (DEDICATED_USER, FALLBACK_USER):
            entry = _lookup(candidate)
            if entry is not None and entry.pw_uid != 0:
                return Account(candidate, entry.pw_uid, entry.pw_gid, entry.pw_dir)
        raise SandboxError(
            f"neither {DEDICATED_USER!r} nor {FALLBACK_USER!r} exists for the "
            "parsers to run as: create one or set INGESTION_PARSER_USER"
        )
    entry = _lookup(user)
    if entry is None:
        raise SandboxError(f"INGESTION_PARSER_USER={user!r}: no such user")
    if entry.pw_uid == os.geteuid():
        return None  # the worker's own user, on purpose
    if entry.pw_uid == 0:
        raise SandboxError(f"INGESTION_PARSER_USER={user!r} is root")
    if not can_switch_users():
        raise SandboxError(
            f"INGESTION_PARSER_USER={user!r}: the worker must run as root (or hold "
            "CAP_SETUID and CAP_SETGID as ambient capabilities) to start parsers "
            "as another user (or leave the setting empty)"
        )
    return Account(user, entry.pw_uid, entry.pw_gid, entry.pw_dir)


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def set_capabilities(mask: int) -> bool:
    """Set this process's effective, permitted and inheritable capabilities to
    `mask` (bits of CAP_* numbers below 32; 0 clears them). Linux only."""
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(mask, mask, mask))
    return ctypes.CDLL(None, use_errno=True).capset(ctypes.byref(header), data) == 0


def _clear_capabilities() -> None:
    # Leaving root clears them; a non-root worker's ambient ones would stay.
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    set_capabilities(0)


def drop_privileges(uid: int, gid: int) -> None:
    """Become `uid`:`gid` for good: no supplementary groups, real, effective and
    saved ids all changed, no capability left. PermissionError if any remains."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if _LINUX:
        _clear_capabilities()
    left = privileges_left(uid, gid)
    if left:
        raise PermissionError(f"still holding {left}")


def privileges_left(uid: int, gid: int) -> list[str]:
    """What this process holds beyond `uid`:`gid` with no groups or capabilities."""
    left = []
    if hasattr(os, "getresuid"):
        if set(os.getresuid()) != {uid} or set(os.getresgid()) != {gid}:
            left.append("another user or group id")
    elif (os.getuid(), os.geteuid(), os.getgid()) != (uid, uid, gid):
        left.append("another user or group id")
    if os.getgroups() not in ([], [gid]):
        left.append("supplementary groups")
    caps = capabilities() or {}
    left.extend(
        name for name in ("CapPrm", "CapEff", "CapAmb") if caps.get(name, 0) != 0
    )
    return left


def readable_by(path: str | os.PathLike, account: Account) -> bool:
    """Whether `account` (with no supplementary groups) can read `path` as its
    permission bits say: search on every directory above it, read on it. POSIX
    ACLs are not read. False for a path that does not exist."""
    target = Path(path).absolute()
    try:
        mode_of_target = target.stat()
        parents = [parent.stat() for parent in target.parents]
    except OSError:
        return False
    return _allows(mode_of_target, account, stat.S_IROTH) and all(
        _allows(parent, account, stat.S_IXOTH) for parent in parents
    )


def _allows(info: os.stat_result, account: Account, other_bit: int) -> bool:
    if info.st_uid == account.uid:
        return bool(info.st_mode & other_bit << 6)
    if info.st_gid == account.gid:
        return bool(info.st_mode & other_bit << 3)
    return bool(info.st_mode & other_bit)
