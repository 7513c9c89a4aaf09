"""The bootstrap's guard of numba's kernel cache (app/_bootstrap.py): stale kernels go when a source changes."""

from app._bootstrap import refresh_kernel_cache


def tree(tmp_path):
    for package in ("collision", "app"):
        (tmp_path / package / "__pycache__").mkdir(parents=True)
        (tmp_path / package / "mod.py").write_text("x = 1\n")
        (tmp_path / package / "__pycache__" / "mod.f-1.py311.nbi").write_bytes(b"index")
        (tmp_path / package / "__pycache__" / "mod.f-1.py311.0.nbc").write_bytes(b"code")
        (tmp_path / package / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"pyc")
    return tmp_path / "stamp"


def cached(tmp_path):
    return sorted(p.name for p in tmp_path.rglob("*.nb*"))


def test_kernels_are_deleted_when_a_source_changes_and_kept_otherwise(tmp_path):
    stamp = tree(tmp_path)
    assert refresh_kernel_cache(tmp_path, stamp) == 4  # no stamp yet: nothing is known to be fresh
    assert cached(tmp_path) == [] and stamp.exists()
    assert (tmp_path / "app" / "__pycache__" / "mod.cpython-311.pyc").exists()  # only numba's files go
    (tmp_path / "app" / "__pycache__" / "mod.f-1.py311.nbi").write_bytes(b"index")  # compiled again
    assert refresh_kernel_cache(tmp_path, stamp) == 0  # same sources: kept
    assert cached(tmp_path) == ["mod.f-1.py311.nbi"]
    (tmp_path / "collision" / "mod.py").write_text("x = 2\n")  # another file than the kernel's changed
    assert refresh_kernel_cache(tmp_path, stamp) == 1
    assert cached(tmp_path) == []
    (tmp_path / "collision" / "new.py").write_text("y = 1\n")  # a new file counts too
    (tmp_path / "app" / "__pycache__" / "mod.f-1.py311.nbi").write_bytes(b"index")
    assert refresh_kernel_cache(tmp_path, stamp) == 1
