import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Asks MirrorMaker 2's own client (connect-mirror-client's RemoteClusterUtils) about a cluster
 * and prints the answer as one line of JSON on stdout. Errors go to stderr with a non-zero exit.
 *
 * <pre>
 * MirrorClientProbe BOOTSTRAP translate REMOTE_ALIAS GROUP [key=value ...]
 * MirrorClientProbe BOOTSTRAP upstream [key=value ...]
 * MirrorClientProbe BOOTSTRAP hops SOURCE_ALIAS [key=value ...]
 * </pre>
 * Trailing key=value pairs are extra MirrorClientConfig properties (replication.policy.class, ...).
 */
public final class MirrorClientProbe {
    private static final Duration TRANSLATE_TIMEOUT = Duration.ofSeconds(20);

    private MirrorClientProbe() {
    }

    public static void main(String[] args) {
        int status;
        try {
            System.out.println(run(args));
            System.out.flush();
            status = 0;
        } catch (IllegalArgumentException e) {
            System.err.println("usage error: " + e.getMessage());
            status = 2;
        } catch (Exception e) {
            System.err.println("MirrorClientProbe failed: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        // Kafka clients may leave non-daemon threads behind: never hang the caller.
        System.exit(status);
    }

    static String run(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException("MirrorClientProbe <bootstrap.servers> <translate|upstream|hops> [args]");
        }
        String command = args[1];
        int arity = switch (command) {
            case "translate" -> 2;
            case "upstream" -> 0;
            case "hops" -> 1;
            default -> throw new IllegalArgumentException("unknown command " + command);
        };
        if (args.length < 2 + arity) {
            throw new IllegalArgumentException(command + " needs " + arity + " argument(s)");
        }
        String[] positional = Arrays.copyOfRange(args, 2, 2 + arity);
        Map<String, Object> props = properties(args[0], Arrays.copyOfRange(args, 2 + arity, args.length));
        return switch (command) {
            case "translate" -> translate(props, positional[0], positional[1]);
            case "upstream" -> upstream(props);
            default -> "{\"hops\": " + RemoteClusterUtils.replicationHops(props, positional[0]) + "}";
        };
    }

    static Map<String, Object> properties(String bootstrap, String[] pairs) {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", bootstrap);
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got " + pair);
            }
            props.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return props;
    }

    static String translate(Map<String, Object> props, String remoteAlias, String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets =
                RemoteClusterUtils.translateOffsets(props, remoteAlias, group, TRANSLATE_TIMEOUT);
        List<TopicPartition> partitions = new ArrayList<>(offsets.keySet());
        partitions.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<String> items = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            items.add("{\"topic\": " + quote(tp.topic()) + ", \"partition\": " + tp.partition()
                    + ", \"offset\": " + offsets.get(tp).offset() + "}");
        }
        return "{\"offsets\": [" + String.join(", ", items) + "]}";
    }

    static String upstream(Map<String, Object> props) throws Exception {
        List<String> items = new ArrayList<>();
        for (String alias : new TreeSet<>(RemoteClusterUtils.upstreamClusters(props))) {
            items.add(quote(alias));
        }
        return "{\"upstream_clusters\": [" + String.join(", ", items) + "]}";
    }

    static String quote(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
