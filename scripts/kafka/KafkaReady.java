// Waits until a Kafka cluster answers metadata with the expected number of brokers, for
// scripts/kafka.sh. Run with the single-file source launcher and the broker's jars:
//   java -cp '.kafka/lib/*' scripts/kafka/KafkaReady.java <bootstrap> <brokers> <timeout-ms>
//        [<client.properties> [<principal> <resource-type> <pattern-type> <name> <operation>]...]
// Prints the cluster id, the controller and the brokers, and exits 0 once every broker is
// registered (and unfenced: metadata lists only those); exits 1 at the timeout. With a
// properties file, the admin client uses its settings (security); the ACLs that follow (each
// five words, e.g. User:app TOPIC PREFIXED allowed- WRITE: ALLOW from any host) are then created.

import java.io.FileReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

public class KafkaReady {
    public static void main(String[] args) throws Exception {
        if (args.length < 3 || (args.length > 4 && (args.length - 4) % 5 != 0)) {
            System.err.println("usage: KafkaReady <bootstrap> <brokers> <timeout-ms> [<client.properties> [<principal> <resource-type> <pattern-type> <name> <operation>]...]");
            System.exit(2);
        }
        String bootstrap = args[0];
        int expected = Integer.parseInt(args[1]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[2]);
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kafka-ready");
        if (args.length > 3) {
            try (FileReader in = new FileReader(args[3])) {
                props.load(in);
            }
        }
        List<AclBinding> acls = new ArrayList<>();
        for (int i = 4; i + 5 <= args.length; i += 5) {
            acls.add(new AclBinding(
                new ResourcePattern(ResourceType.fromString(args[i + 1]), args[i + 3], PatternType.fromString(args[i + 2])),
                new AccessControlEntry(args[i], "*", AclOperation.fromString(args[i + 4]), AclPermissionType.ALLOW)));
        }
        String last = "no answer yet";
        try (Admin admin = Admin.create(props)) {
            while (System.currentTimeMillis() < deadline) {
                try {
                    DescribeClusterResult result = admin.describeCluster(new DescribeClusterOptions().timeoutMs(5000));
                    String clusterId = result.clusterId().get(6, TimeUnit.SECONDS);
                    Node controller = result.controller().get(6, TimeUnit.SECONDS);
                    var nodes = result.nodes().get(6, TimeUnit.SECONDS);
                    last = nodes.size() + " of " + expected + " brokers";
                    if (nodes.size() >= expected) {
                        StringBuilder sb = new StringBuilder();
                        for (Node n : nodes) sb.append(sb.length() == 0 ? "" : ",").append(n.id()).append('@').append(n.host()).append(':').append(n.port());
                        System.out.println("cluster " + clusterId + ": brokers " + sb + ", controller " + (controller == null ? "?" : controller.id()));
                        if (!acls.isEmpty()) {
                            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
                            System.out.println(acls.size() + " ACLs created");
                        }
                        return;
                    }
                } catch (Exception e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    last = cause.getClass().getSimpleName() + ": " + cause.getMessage();
                }
                Thread.sleep(500);
            }
        }
        System.err.println("the cluster at " + bootstrap + " did not answer with " + expected + " brokers in time (last: " + last + ")");
        System.exit(1);
    }
}
