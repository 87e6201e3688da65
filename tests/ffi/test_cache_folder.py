"""pytvm uses a cache folder only if it is this user's, writable by nobody else and reached
through no link; it creates its folders private (0700) whatever the umask.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.ffi import cache_folder, compile_cache
from pytvm.ffi.errors import TVMPermissionError
from pytvm.ffi.libinfo import compile_shared

OTHER_UID = 12345
REMEDY = "(remove it or set XDG_CACHE_HOME to a folder of your own)"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")

LOAD_RUNTIME = r"""
import hashlib
import os
from pytvm.ffi import host_library
from pytvm.ffi.errors import TVMPermissionError
if "UMASK" in os.environ:
    os.umask(int(os.environ["UMASK"], 8))
try:
    host_library.runtime_library()
except TVMPermissionError as err:
    print(f"refused: {err}")
else:
    print("loaded")
"""
PLANTED = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
  FILE* f = fopen(MARKER, "w");
  if (f) { fputs("the planted library ran", f); fclose(f); }
}
"""


def _load_runtime(cache: Path, umask: str | None = None) -> str:
    """Load the runtime library in a fresh process whose cache is ``cache/pytvm``."""
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    if umask is not None:
        env["UMASK"] = umask
    result = subprocess.run(
        [sys.executable, "-c", LOAD_RUNTIME],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "no such user"


def _runtime_folder(cache: Path) -> Path:
    """Where the runtime library lives under ``cache`` (its name is a hash of the sources)."""
    script = "from pytvm.ffi import libinfo; print(libinfo._sources_digest())"
    digest = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    return cache / "pytvm" / digest


@as_root
@pytest.mark.needs_cc
def test_a_library_planted_in_another_users_cache_folder_is_not_loaded(tmp_path: Path) -> None:
    folder = _runtime_folder(tmp_path)
    folder.mkdir(parents=True)
    marker = tmp_path / "marker"
    (tmp_path / "planted.c").write_text(PLANTED)
    planted = folder / "libpytvm_runtime.so"
    compile_shared([tmp_path / "planted.c"], planted, [f'-DMARKER="{marker}"'])
    digest = hashlib.sha256(planted.read_bytes()).hexdigest()
    (folder / "libpytvm_runtime.so.sha256").write_text(f"{digest} {planted.stat().st_size}\n")
    for path in (tmp_path / "pytvm", folder, *folder.iterdir()):
        os.chown(path, OTHER_UID, OTHER_UID)
        path.chmod(0o777)
    assert _load_runtime(tmp_path) == (
        f"refused: refusing to use the cache folder {tmp_path / 'pytvm'}: owned by uid "
        f"{OTHER_UID} ({_user_name(OTHER_UID)}) with mode 0777; it must be yours and not "
        f"writable by others {REMEDY}"
    )
    assert not marker.exists()


@as_root
def test_a_folder_owned_by_another_user_is_refused_even_if_private(tmp_path: Path) -> None:
    root = tmp_path / "pytvm"
    root.mkdir(mode=0o700)
    os.chown(root, OTHER_UID, OTHER_UID)
    with pytest.raises(TVMPermissionError, match=f"owned by uid {OTHER_UID} .* with mode 0700"):
        cache_folder.trusted_folder(root, root / "kernels")
    assert not (root / "kernels").exists()


def test_a_world_writable_cache_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "pytvm"
    cache_folder.trusted_folder(root, root / "kernels")
    (root / "kernels").chmod(0o777)
    with pytest.raises(TVMPermissionError) as info:
        cache_folder.trusted_folder(root, root / "kernels" / "ab")
    assert str(info.value) == (
        f"refusing to use the cache folder {root / 'kernels'}: owned by uid {os.geteuid()} "
        f"({_user_name(os.geteuid())}) with mode 0777; it must be yours and not writable by "
        f"others {REMEDY}"
    )


def test_a_group_writable_cache_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "pytvm"
    entry = compile_cache.cached_file(root / "a.txt", lambda f: f.write_text("x"), root=root)
    entry.chmod(0o620)
    with pytest.raises(TVMPermissionError, match=re.escape(f"the cache file {entry}: owned by")):
        compile_cache.cached_file(entry, lambda f: f.write_text("x"), root=root)


def test_a_linked_folder_or_file_in_the_cache_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "pytvm"
    outside = tmp_path / "outside"
    outside.mkdir()
    cache_folder.trusted_folder(root, root / "kernels")
    (root / "kernels" / "ab").symlink_to(outside)
    with pytest.raises(TVMPermissionError) as info:
        compile_cache.cached_file(
            root / "kernels" / "ab" / "k.o", lambda f: f.write_text("x"), root=root
        )
    assert str(info.value) == (
        f"refusing to use the cache folder {root / 'kernels' / 'ab'}: it is a symbolic link "
        f"(to {outside}), and pytvm follows no link inside its cache {REMEDY}"
    )
    (root / "kernels" / "cd.o").symlink_to(outside / "k.o")
    link = root / "kernels" / "cd.o"
    with pytest.raises(TVMPermissionError, match=re.escape(f"file {link}: it is a symbolic link")):
        compile_cache.cached_file(link, lambda f: f.write_text("x"), root=root)
    assert list(outside.iterdir()) == []


def test_the_cache_root_may_not_be_a_link(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "pytvm").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(TVMPermissionError, match="pytvm: it is a symbolic link"):
        cache_folder.trusted_folder(tmp_path / "pytvm")


@pytest.mark.needs_cc
def test_new_cache_folders_are_private_under_umask_000(tmp_path: Path) -> None:
    assert _load_runtime(tmp_path / "cache", umask="000") == "loaded"
    made = [tmp_path / "cache", *sorted((tmp_path / "cache").rglob("*"))]
    folders = [p for p in made if p.is_dir()]
    assert len(folders) >= 3  # the cache home, pytvm, the runtime's folder
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in folders} == {
        p.name: 0o700 for p in folders
    }
    files = [p for p in made if p.is_file()]
    assert files and all(p.stat().st_mode & 0o077 == 0 for p in files), [
        (p.name, oct(p.stat().st_mode)) for p in files
    ]
