package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoint files on a real local directory, through the CheckpointFileManager contract Spark's
 * streaming checkpoints rely on: an atomic create is invisible until closed, never leaves a partial
 * file, and only replaces an existing file when allowed to.
 */
class LocalCheckpointFilesTest {

    @TempDir
    java.nio.file.Path root;

    private LocalCheckpointFiles files;
    private Path checkpoint;

    @BeforeEach
    void manager() {
        checkpoint = new Path(root.toUri());
        files = new LocalCheckpointFiles(checkpoint, new Configuration());
    }

    private Path path(String relative) {
        return new Path(checkpoint, relative);
    }

    private java.nio.file.Path local(String relative) {
        return root.resolve(relative);
    }

    private void writeAtomically(String relative, String text, boolean overwrite) throws IOException {
        try (var out = files.createAtomic(path(relative), overwrite)) {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    private String read(String relative) throws IOException {
        try (FSDataInputStream in = files.open(path(relative))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The names in a directory of the temp dir, hidden ones too, sorted. */
    private List<String> names(String relative) throws IOException {
        try (Stream<java.nio.file.Path> entries = Files.list(local(relative))) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void anAtomicFileAppearsWhenClosedWithNoTemporaryFileOrChecksumLeft() throws IOException {
        var out = files.createAtomic(path("offsets/0"), false);
        out.write("v1\n{}".getBytes(StandardCharsets.UTF_8));
        out.flush();
        assertFalse(files.exists(path("offsets/0")), "not visible before it is closed");
        out.close();

        assertTrue(files.exists(path("offsets/0")));
        assertEquals("v1\n{}", read("offsets/0"));
        assertEquals(List.of("0"), names("offsets"), "no temporary file, no .crc file");
    }

    @Test
    void aCancelledFileLeavesNothingBehind() throws IOException {
        var out = files.createAtomic(path("commits/3"), false);
        out.write("partial".getBytes(StandardCharsets.UTF_8));
        out.cancel();
        assertFalse(files.exists(path("commits/3")));
        assertEquals(List.of(), names("commits"));
    }

    @Test
    void anExistingFileIsNotReplacedWithoutOverwrite() throws IOException {
        writeAtomically("commits/0", "first", false);
        assertThrows(FileAlreadyExistsException.class, () -> writeAtomically("commits/0", "second", false));
        assertEquals("first", read("commits/0"));
    }

    @Test
    void anExistingFileIsReplacedWithOverwrite() throws IOException {
        writeAtomically("metadata", "first", false);
        writeAtomically("metadata", "second", true);
        assertEquals("second", read("metadata"));
        assertEquals(List.of("metadata"), names(""));
    }

    @Test
    void renamingMovesTheTemporaryFileIntoPlace() throws IOException {
        FSDataOutputStream out = files.createTempFile(path("deep/down/.1.tmp"));
        out.write(new byte[] {1, 2, 3});
        out.close();
        files.renameTempFile(path("deep/down/.1.tmp"), path("deep/down/1"), false);
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(local("deep/down/1")));
        assertFalse(Files.exists(local("deep/down/.1.tmp")));
    }

    @Test
    void renamingWithoutOverwriteOntoAnExistingFileKeepsBoth() throws IOException {
        Files.writeString(local("7"), "kept");
        try (FSDataOutputStream out = files.createTempFile(path(".7.tmp"))) {
            out.write('x');
        }
        assertThrows(FileAlreadyExistsException.class, () -> files.renameTempFile(path(".7.tmp"), path("7"), false));
        assertEquals("kept", Files.readString(local("7")));
        assertTrue(Files.exists(local(".7.tmp")), "the temporary file is left as it is");
    }

    @Test
    void aChecksumFileOfTheReplacedFileIsRemoved() throws IOException {
        Files.writeString(local("5"), "old");
        Files.writeString(local(".5.crc"), "checksum of old");
        try (FSDataOutputStream out = files.createTempFile(path(".5.tmp"))) {
            out.write("new".getBytes(StandardCharsets.UTF_8));
        }
        files.renameTempFile(path(".5.tmp"), path("5"), true);
        assertEquals(List.of("5"), names(""));
        assertEquals("new", read("5"), "read as it is, with no stale checksum to fail it");
    }

    @Test
    void directoriesAreMadeListedAndDeleted() throws IOException {
        files.mkdirs(path("sources/0"));
        assertTrue(Files.isDirectory(local("sources/0")));
        files.mkdirs(path("sources/0")); // again: no error
        writeAtomically("offsets/0", "a", false);
        writeAtomically("offsets/1", "b", false);

        FileStatus[] listed = files.list(path("offsets"));
        assertEquals(List.of("0", "1"), Arrays.stream(listed).map(s -> s.getPath().getName()).sorted().toList());
        files.delete(path("offsets/0"));
        assertFalse(files.exists(path("offsets/0")));
        files.delete(path("offsets/0")); // already gone: no error
        assertEquals(List.of("1"), names("offsets"));
    }

    @Test
    void onlyLocalPathsAreAccepted() {
        assertThrows(IllegalArgumentException.class, () -> files.exists(new Path("hdfs://namenode:8020/checkpoint")));
    }
}
