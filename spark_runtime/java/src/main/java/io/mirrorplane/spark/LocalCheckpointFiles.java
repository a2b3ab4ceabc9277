package io.mirrorplane.spark;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager;

/**
 * Spark's checkpoint files on a local disk, written with java.nio.
 *
 * <p>Without Hadoop's native library (it is not published to Maven Central), Hadoop's local file
 * system forks a process for file metadata: {@code readlink} for every rename through FileContext,
 * {@code chmod} for every file or directory it creates with a permission. A micro-batch writes two
 * checkpoint files (its offsets and its commit), each through a temporary file, a checksum file and
 * a rename: measured at 5,000 records/s, about 70 processes a second. Here a file is written to a
 * temporary file and moved into place atomically ({@code rename(2)}), with no checksum file, and
 * nothing is forked. Reads, listings and deletions stay with Hadoop's local file system, which
 * reads a file without a checksum file as it is. Used only for {@code file:} checkpoints.
 */
public final class LocalCheckpointFiles extends FileSystemBasedCheckpointFileManager {

    public LocalCheckpointFiles(Path path, Configuration hadoopConf) {
        super(path, hadoopConf);
    }

    @Override
    public FSDataOutputStream createTempFile(Path path) {
        try {
            java.nio.file.Path file = local(path);
            if (!Files.isDirectory(file.getParent())) {
                Files.createDirectories(file.getParent());
            }
            return new FSDataOutputStream(Files.newOutputStream(file), null);
        } catch (IOException e) {
            throw rethrow(e);
        }
    }

    @Override
    public void renameTempFile(Path source, Path destination, boolean overwriteIfPossible) {
        java.nio.file.Path target = local(destination);
        try {
            if (!overwriteIfPossible && Files.exists(target)) {
                throw new FileAlreadyExistsException(destination + " already exists");
            }
            // a checksum file written beside it by Hadoop earlier would no longer match
            Files.deleteIfExists(target.resolveSibling("." + target.getFileName() + ".crc"));
            try {
                Files.move(local(source), target, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(local(source), target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw rethrow(e);
        }
    }

    @Override
    public void mkdirs(Path path) {
        try {
            Files.createDirectories(local(path));
        } catch (IOException e) {
            throw rethrow(e);
        }
    }

    @Override
    public boolean exists(Path path) {
        return Files.exists(local(path));
    }

    private java.nio.file.Path local(Path path) {
        Path qualified = fs().makeQualified(path);
        if (!"file".equals(qualified.toUri().getScheme())) {
            throw new IllegalArgumentException("not a local path: " + qualified);
        }
        return java.nio.file.Paths.get(qualified.toUri());
    }

    /**
     * Throws an IOException as it is, as the Scala interface this overrides may: Spark tells a
     * FileAlreadyExistsException (another query writing the same checkpoint) from other failures.
     */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException rethrow(Throwable error) throws E {
        throw (E) error;
    }
}
