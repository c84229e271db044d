// The real Java producer (kafka-clients, default partitioner) for test/kafka/java-agreement.test.js.
//
// Run with the single-file source launcher and the jars scripts/kafka.sh fetches:
//   java -cp '.kafka/lib/*' test/kafka/java/KeyedProducer.java <bootstrap> <topic>
// Input, one record per line on stdin: the key's bytes in hex, or "-" for the empty key.
// Each record i (from 0) is sent with that key and the value "java:<i>" (acks=all,
// idempotent, no partition given and no partitioner.class: the producer's built-in
// partitioner places it, toPositive(murmur2(key)) % partitions for a keyed record).
// Output, one line per record in input order: "<i> <partition> <offset>" from its
// RecordMetadata. Any failed send ends the program with exit status 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class KeyedProducer {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: KeyedProducer <bootstrap> <topic>");
            System.exit(2);
        }
        List<byte[]> keys = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) keys.add(line.equals("-") ? new byte[0] : hex(line));

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "kdp-java-agreement");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        int n = keys.size();
        int[] partition = new int[n];
        long[] offset = new long[n];
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < n; i++) {
                final int id = i;
                byte[] value = ("java:" + i).getBytes(StandardCharsets.US_ASCII);
                producer.send(new ProducerRecord<>(args[1], keys.get(i), value), (metadata, e) -> {
                    if (e != null) failure.compareAndSet(null, e);
                    else {
                        partition[id] = metadata.partition();
                        offset[id] = metadata.offset();
                    }
                });
            }
            producer.flush();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.US_ASCII);
        for (int i = 0; i < n; i++) out.append(Integer.toString(i)).append(' ').append(Integer.toString(partition[i])).append(' ').append(Long.toString(offset[i])).append('\n');
        out.flush();
    }

    private static byte[] hex(String s) {
        if (s.length() % 2 != 0) throw new IllegalArgumentException("odd hex length: " + s);
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }
}
