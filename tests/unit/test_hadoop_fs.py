"""Deleting a mirror's checkpoints with Hadoop's FsShell, on the local file system (real Java, no Hadoop
cluster): plain paths and file: URIs, a missing folder, refusals and errors."""

import os
import subprocess
import time

import pytest

from controlplane.infra import hadoop_fs


def checkpoint(root, mirror="east-to-west"):
    """A folder laid out as a streaming checkpoint: offsets, commits, a metadata file."""
    folder = root / mirror
    for connector in ("source",):
        for sub in ("offsets", "commits", "sources/0"):
            (folder / connector / sub).mkdir(parents=True)
        (folder / connector / "metadata").write_text('{"id": "q"}')
        (folder / connector / "offsets" / "0").write_text("v1\n{}")
    return folder


def test_mirror_location_joins_root_and_name():
    assert hadoop_fs.mirror_location("hdfs://nn:8020/ckpt/", "east-to-west") == "hdfs://nn:8020/ckpt/east-to-west"
    assert hadoop_fs.mirror_location("file:///var/ckpt", "m") == "file:///var/ckpt/m"


@pytest.mark.parametrize("as_uri", [True, False], ids=["file-uri", "plain-path"])
def test_delete_removes_the_folder_and_nothing_beside_it(tmp_path, as_uri):
    folder = checkpoint(tmp_path)
    neighbour = checkpoint(tmp_path, "east-to-west-2")
    started = time.monotonic()
    hadoop_fs.delete(folder.as_uri() if as_uri else str(folder), env={k: v for k, v in os.environ.items()
                                                                          if k != "HADOOP_CONF_DIR"})
    assert not folder.exists()
    assert (neighbour / "source" / "offsets" / "0").is_file()
    assert time.monotonic() - started < 30


def test_a_missing_folder_is_not_an_error(tmp_path):
    hadoop_fs.delete((tmp_path / "never-ran").as_uri())
    hadoop_fs.delete(str(tmp_path / "never-ran"))


def test_hadoop_conf_dir_is_used_when_set(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "core-site.xml").write_text(
        '<?xml version="1.0"?><configuration><property><name>fs.defaultFS</name>'
        f"<value>{tmp_path.as_uri()}</value></property></configuration>")
    folder = checkpoint(tmp_path / "data")
    # a plain path is on the default file system the configuration names
    hadoop_fs.delete(str(folder), env=dict(os.environ, HADOOP_CONF_DIR=str(conf)))
    assert not folder.exists()


def test_an_unknown_file_system_fails_with_hadoops_reason():
    with pytest.raises(hadoop_fs.HadoopFsError) as raised:
        hadoop_fs.delete("nosuchfs://bucket/checkpoints/m")
    message = str(raised.value)
    assert message.startswith("deleting nosuchfs://bucket/checkpoints/m failed")
    assert "nosuchfs" in message.split("failed", 1)[1] and "\tat " not in message


def test_a_delete_that_takes_too_long_is_stopped(tmp_path):
    with pytest.raises(hadoop_fs.HadoopFsError, match=r"did not finish within 0\.01s"):
        hadoop_fs.delete(str(checkpoint(tmp_path)), timeout=0.01)


@pytest.mark.parametrize("uri", ["", "/", "file:///", "hdfs://nn:8020/", "s3a://bucket"])
def test_a_root_is_never_deleted(uri):
    with pytest.raises(hadoop_fs.HadoopFsError, match="refusing"):
        hadoop_fs.delete(uri)


def test_without_java_the_error_says_so(tmp_path):
    with pytest.raises(hadoop_fs.HadoopFsError, match="needs Java"):
        hadoop_fs.delete(str(tmp_path / "x"), env={"PATH": str(tmp_path)})


def test_put_is_whole_or_nothing_and_exists_tells(tmp_path):
    source = tmp_path / "archive.zip"
    source.write_bytes(b"jar bytes" * 1000)
    target = (tmp_path / "staged" / "lib" / "archive.zip").as_uri()
    assert not hadoop_fs.exists(target)
    hadoop_fs.put(source, target)
    assert hadoop_fs.exists(target)
    assert (tmp_path / "staged" / "lib" / "archive.zip").read_bytes() == source.read_bytes()
    left = [p.name for p in (tmp_path / "staged" / "lib").iterdir() if not p.name.endswith(".crc")]  # checksums
    assert left == ["archive.zip"], "a partial file is left"
    hadoop_fs.put(source, target)  # again (a second worker staging the same content): fine
    assert hadoop_fs.exists(target)


def test_a_delete_defeated_by_a_concurrent_writer_is_tried_again(tmp_path, monkeypatch):
    """FsShell says "Input/output error" when a file lands in the folder while its tree is walked: the
    next pass deletes it. Other failures are not repeated."""
    folder = checkpoint(tmp_path)
    real_shell, calls = hadoop_fs.fs_shell, []

    def shell(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            return subprocess.CompletedProcess(args, 1, "", f"rm: `{folder.as_uri()}': Input/output error\n")
        return real_shell(*args, **kwargs)

    monkeypatch.setattr(hadoop_fs, "fs_shell", shell)
    hadoop_fs.delete(folder.as_uri())
    assert not folder.exists() and len(calls) == 2

    calls.clear()
    monkeypatch.setattr(hadoop_fs, "fs_shell", lambda *args, **kwargs: calls.append(args) or
                        subprocess.CompletedProcess(args, 1, "", "rm: Permission denied\n"))
    with pytest.raises(hadoop_fs.HadoopFsError, match="Permission denied"):
        hadoop_fs.delete(folder.as_uri())
    assert len(calls) == 1
