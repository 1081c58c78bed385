"""`rig cp` between the host and a local or docker workspace, as `docker cp` copies: files and directories,
modes, mtimes and symlinks kept, `-` tar streams both ways, bounded memory for 1 GB, and every tar entry
that would land outside the destination refused with nothing written outside it."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.providers.connect.conftest import Reached

MTIME = 978307200  # 2001-01-01


def _machine(reached: Reached, script: str) -> str:
    """What ``script`` prints inside the workspace (a shell there, as ``rig exec`` runs it)."""
    done = reached.rig("exec", "dev", "--", "sh", "-c", script)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _scratch(reached: Reached, name: str) -> str:
    """A fresh directory inside the workspace for one test (absolute: the machine's own path)."""
    base = "/tmp" if reached.provider == "docker" else _machine(reached, "pwd").strip()
    path = f"{base}/{name}"
    _machine(reached, f"rm -rf {path}; mkdir -p {path}")
    return path


def _tree(root: Path) -> None:
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "top.txt").write_text("top\n")
    (root / "sub" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (root / "sub" / "run.sh").chmod(0o750)
    (root / "sub" / "deep" / "secret").write_bytes(os.urandom(70_000))
    (root / "sub" / "deep" / "secret").chmod(0o600)
    (root / "sub" / "deep").chmod(0o710)
    (root / "link").symlink_to("sub/run.sh")
    (root / "dangling").symlink_to("/nowhere/at/all")
    for path in (root / "top.txt", root / "sub" / "run.sh", root / "sub" / "deep" / "secret"):
        os.utime(path, (MTIME, MTIME))


def _same_tree(left: Path, right: Path) -> None:
    names = sorted(str(p.relative_to(left)) for p in left.rglob("*"))
    assert names == sorted(str(p.relative_to(right)) for p in right.rglob("*"))
    for name in names:
        a, b = os.lstat(left / name), os.lstat(right / name)
        assert stat.S_IFMT(a.st_mode) == stat.S_IFMT(b.st_mode), name
        assert stat.S_IMODE(a.st_mode) == stat.S_IMODE(b.st_mode), name
        if stat.S_ISLNK(a.st_mode):
            assert os.readlink(left / name) == os.readlink(right / name)
        elif stat.S_ISREG(a.st_mode):
            assert (left / name).read_bytes() == (right / name).read_bytes(), name
            assert int(a.st_mtime) == int(b.st_mtime), name


def test_a_file_both_ways_with_its_mode_and_mtime(reached: Reached, tmp_path: Path) -> None:
    where = _scratch(reached, "cp-file")
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(300_000))
    source.chmod(0o640)
    os.utime(source, (MTIME, MTIME))
    done = reached.rig("cp", str(source), f"dev:{where}/copied.bin")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert _machine(reached, f"stat -c '%a %Y %s' {where}/copied.bin").split() == ["640", str(MTIME), "300000"]
    back = reached.rig("cp", f"dev:{where}/copied.bin", str(tmp_path / "back.bin"))
    assert back.returncode == 0, back.stderr
    assert (tmp_path / "back.bin").read_bytes() == source.read_bytes()
    assert stat.S_IMODE(os.stat(tmp_path / "back.bin").st_mode) == 0o640
    assert int(os.stat(tmp_path / "back.bin").st_mtime) == MTIME
    # Onto an existing directory: inside it, under its own name; onto an existing file: replaced.
    (tmp_path / "into").mkdir()
    assert reached.rig("cp", f"dev:{where}/copied.bin", str(tmp_path / "into")).returncode == 0
    assert (tmp_path / "into" / "copied.bin").read_bytes() == source.read_bytes()
    (tmp_path / "small").write_text("old")
    assert reached.rig("cp", f"dev:{where}/copied.bin", str(tmp_path / "small")).returncode == 0
    assert (tmp_path / "small").read_bytes() == source.read_bytes()


def test_a_relative_path_is_under_the_working_directory(reached: Reached, tmp_path: Path) -> None:
    (tmp_path / "rel.txt").write_text("relative\n")
    done = reached.rig("cp", str(tmp_path / "rel.txt"), "dev:rel-copy.txt")
    assert done.returncode == 0, done.stderr
    assert _machine(reached, "cat rel-copy.txt") == "relative\n"
    assert reached.rig("cp", "dev:rel-copy.txt", str(tmp_path / "again.txt")).returncode == 0
    assert (tmp_path / "again.txt").read_text() == "relative\n"


def test_a_directory_recursively_with_modes_and_symlinks_both_ways(reached: Reached, tmp_path: Path) -> None:
    where = _scratch(reached, "cp-dir")
    _tree(tmp_path / "tree")
    # Onto an existing directory: the source goes inside it under its own name.
    done = reached.rig("cp", str(tmp_path / "tree"), f"dev:{where}")
    assert done.returncode == 0, done.stderr
    listing = _machine(reached, f"cd {where}/tree && stat -c '%n %a %F' link sub/run.sh sub/deep sub/deep/secret")
    assert "link 777 symbolic link" in listing
    assert "sub/run.sh 750 regular file" in listing
    assert "sub/deep 710 directory" in listing
    assert "sub/deep/secret 600 regular file" in listing
    assert _machine(reached, f"readlink {where}/tree/dangling") == "/nowhere/at/all\n"
    # Onto nothing: it takes the destination's name.
    done = reached.rig("cp", f"dev:{where}/tree", str(tmp_path / "back"))
    assert done.returncode == 0, done.stderr
    _same_tree(tmp_path / "tree", tmp_path / "back")
    # SRC/. copies what the directory holds.
    (tmp_path / "contents").mkdir()
    assert reached.rig("cp", f"dev:{where}/tree/.", str(tmp_path / "contents")).returncode == 0
    _same_tree(tmp_path / "tree", tmp_path / "contents")


def test_tar_streams_on_stdin_and_stdout(reached: Reached, tmp_path: Path) -> None:
    where = _scratch(reached, "cp-stream")
    _tree(tmp_path / "tree")
    archive = subprocess.run(["tar", "-c", "-C", str(tmp_path), "tree"], capture_output=True, check=True).stdout
    done = reached.rig("cp", "-", f"dev:{where}", input=archive, text=False)
    assert done.returncode == 0, done.stderr
    out = reached.rig("cp", f"dev:{where}/tree", "-", text=False)
    assert out.returncode == 0, out.stderr
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        names = {member.name.rstrip("/"): member for member in tar.getmembers()}
    assert names["tree/link"].issym() and names["tree/link"].linkname == "sub/run.sh"
    assert names["tree/sub/run.sh"].mode & 0o777 == 0o750
    assert names["tree/sub/deep/secret"].size == 70_000
    # '-' into something that is no directory of the workspace
    missing = reached.rig("cp", "-", f"dev:{where}/nothing-here", input=archive, text=False)
    assert missing.returncode == 1
    assert b"must be a directory" in missing.stderr


def _evil(entries: list[tuple[str, str, str]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, kind, value in entries:
            member = tarfile.TarInfo(name)
            if kind == "symlink":
                member.type, member.linkname = tarfile.SYMTYPE, value
                tar.addfile(member)
            else:
                data = value.encode()
                member.size = len(data)
                tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("absolute", "an absolute path"),
        ("dots", "climbs out with '..'"),
        ("symlink", "goes through the symlink 'link'"),
    ],
)
def test_a_tar_entry_escaping_dest_is_refused_with_nothing_outside(reached: Reached, entry: str, said: str) -> None:
    where = _scratch(reached, f"cp-evil-{entry}")
    outside = _scratch(reached, f"cp-outside-{entry}")
    escape = {
        "absolute": [(f"{outside}/escaped", "file", "bad")],
        "dots": [(f"../cp-outside-{entry}/escaped", "file", "bad")],
        "symlink": [("link", "symlink", outside), ("link/escaped", "file", "bad")],
    }[entry]
    done = reached.rig("cp", "-", f"dev:{where}", input=_evil([("fine.txt", "file", "ok"), *escape]), text=False)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and said in lines[0], lines
    assert _machine(reached, f"ls -A {outside}") == ""


def test_an_existing_symlink_is_never_followed_out_of_dest(reached: Reached, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # Into the host: a directory entry replaces a symlink that stood in its place (never followed).
    where = _scratch(reached, "cp-hostlink")
    _machine(reached, f"mkdir -p {where}/d/sub && echo inner > {where}/d/sub/file")
    dest = tmp_path / "dest"
    (dest / "d").mkdir(parents=True)
    (dest / "d" / "sub").symlink_to(outside)
    done = reached.rig("cp", f"dev:{where}/d", str(dest))
    assert done.returncode == 0, done.stderr
    assert list(outside.iterdir()) == []
    assert (dest / "d" / "sub" / "file").read_text() == "inner\n"
    if reached.provider == "local":  # the machine's directory is the host's: rig unpacks it and refuses
        machine_dir = Path(_machine(reached, "pwd").strip())
        (machine_dir / "landing").mkdir()
        (machine_dir / "landing" / "pre").symlink_to(outside)
        refused = reached.rig("cp", "-", "dev:landing", input=_evil([("pre/escaped", "file", "bad")]), text=False)
        assert refused.returncode == 1
        assert b"goes through the symlink 'pre'" in refused.stderr
        assert list(outside.iterdir()) == []


def test_what_cannot_be_copied_is_one_line_and_exit_1(reached: Reached, tmp_path: Path) -> None:
    where = _scratch(reached, "cp-wrong")
    _machine(reached, f"echo x > {where}/file")
    (tmp_path / "dir").mkdir()
    (tmp_path / "x").write_text("x")
    cases = [
        (["cp", str(tmp_path / "missing"), f"dev:{where}"], "No such file or directory"),
        (["cp", f"dev:{where}/missing", str(tmp_path)], "No such file or directory"),
        (["cp", str(tmp_path / "dir"), f"dev:{where}/file"], "Cannot copy a directory onto the file"),
        (["cp", str(tmp_path / "x"), f"dev:{where}/no/such/dir/x"], "No such directory"),
        (["cp", "nosuch:/tmp", str(tmp_path)], 'Unknown workspace "nosuch"'),
    ]
    for argv, said in cases:
        done = reached.rig(*argv)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1, (argv, done.stderr)
        assert len(lines) == 1 and said in lines[0], (argv, lines)
    both = reached.rig("cp", "dev:/a", "dev:/b")
    assert both.returncode == 2 and "one side is WS:PATH" in both.stderr


# The rig process is started by a small Python of its own: Linux counts the RSS a process had before
# exec in its peak, so started straight from a pytest worker grown large, rig would report the worker's.
_PEAK = (
    "import os, subprocess, sys; process = subprocess.Popen(sys.argv[2:]);"
    " _, status, usage = os.wait4(process.pid, 0);"
    " open(sys.argv[1], 'w').write(str(usage.ru_maxrss));"
    " sys.exit(os.waitstatus_to_exitcode(status))"
)


def _max_rss_mb(argv: list[str], reached: Reached, **kwargs: object) -> float:
    """Peak RSS of the rig process (and the children it waited for), from its own rusage."""
    peak = reached.home / "peak-rss"
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(peak), *argv], cwd=reached.project, env=reached.env, **kwargs
    )  # type: ignore[call-overload]
    assert done.returncode == 0
    return float(peak.read_text()) / 1024


def test_one_gigabyte_in_bounded_memory(reached: Reached, tmp_path: Path) -> None:
    from tests.cli.cli_support import RIG

    where = _scratch(reached, "cp-big")
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:  # sparse, but read as a gigabyte of bytes like any other file
        handle.truncate(1 << 30)
        handle.seek((1 << 30) - 5)
        handle.write(b"tail!")
    try:
        into = _max_rss_mb([RIG, "cp", str(big), f"dev:{where}/big.bin"], reached)
        back = _max_rss_mb([RIG, "cp", f"dev:{where}/big.bin", str(tmp_path / "back.bin")], reached)
        assert os.path.getsize(tmp_path / "back.bin") == 1 << 30
        with (tmp_path / "back.bin").open("rb") as handle:
            handle.seek(-5, os.SEEK_END)
            assert handle.read() == b"tail!"
    finally:
        _machine(reached, f"rm -rf {where}")
    assert into < 150, f"rig cp into the workspace peaked at {into:.0f} MB"
    assert back < 150, f"rig cp out of the workspace peaked at {back:.0f} MB"


def test_remote_daemons_copy_a_directory_both_ways(reached_remote: Reached, tmp_path: Path) -> None:
    """The same archive API over tcp+TLS, over ssh, and on Podman."""
    reached = reached_remote
    where = _scratch(reached, "cp-remote")
    _tree(tmp_path / "tree")
    done = reached.rig("cp", str(tmp_path / "tree"), f"dev:{where}/")
    assert done.returncode == 0, done.stderr
    assert reached.rig("cp", f"dev:{where}/tree", str(tmp_path / "back")).returncode == 0
    _same_tree(tmp_path / "tree", tmp_path / "back")
    missing = reached.rig("cp", str(tmp_path / "tree"), f"dev:{where}/no/such/place")
    assert missing.returncode == 1 and "No such directory" in missing.stderr
