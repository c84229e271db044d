// Reference values from the real Kafka Java client, for test/java-crosscheck.test.js.
//
// Run with the single-file source launcher (Java 11+):
//   java -cp 'test/java/target/lib/*' test/java/Murmur2Fixture.java
// The classpath needs slf4j-api next to kafka-clients: Utils has a static slf4j Logger, so
// calling Utils.murmur2 with kafka-clients alone fails with NoClassDefFoundError. Fetch both:
//   cd test/java && mvn -q -B dependency:copy-dependencies -DoutputDirectory=target/lib \
//     -DincludeArtifactIds=kafka-clients,slf4j-api
// (slf4j then warns on stderr that it has no binding and logs nothing; that is harmless.)
//
// Input, one key per line on stdin:   <key> <n1,n2,...>
//   <key> is the key's bytes in hex (lower or upper case), or "-" for the empty key.
// Output, one line per input line:    <murmur2> <p1,p2,...>
//   <murmur2> is Utils.murmur2(bytes) as a signed decimal int, and pi is
//   Utils.toPositive(Utils.murmur2(bytes)) % ni, the partition the Java producer's
//   BuiltInPartitioner picks for a keyed record.
// A malformed line is reported on stderr and ends the program with exit status 2.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.utils.Utils;

public class Murmur2Fixture {
    private static final BufferedWriter out = new BufferedWriter(
        new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.US_ASCII), 1 << 16);
        StringBuilder sb = new StringBuilder();
        String line;
        long lineNo = 0;
        while ((line = in.readLine()) != null) {
            lineNo++;
            int space = line.indexOf(' ');
            if (space < 0 || line.indexOf(' ', space + 1) >= 0) fail(lineNo, "expected '<hex|-> <n1,n2,...>'");
            byte[] key = parseHex(line.substring(0, space), lineNo);
            String[] counts = line.substring(space + 1).split(",", -1);

            int hash = Utils.murmur2(key);
            sb.setLength(0);
            sb.append(hash).append(' ');
            for (int i = 0; i < counts.length; i++) {
                int n;
                try {
                    n = Integer.parseInt(counts[i]);
                } catch (NumberFormatException e) {
                    n = 0;
                }
                if (n < 1) fail(lineNo, "bad partition count '" + counts[i] + "'");
                if (i > 0) sb.append(',');
                sb.append(Utils.toPositive(hash) % n);
            }
            sb.append('\n');
            out.append(sb);
        }
        out.flush();
    }

    private static byte[] parseHex(String hex, long lineNo) {
        if (hex.equals("-")) return new byte[0];
        int length = hex.length();
        if (length == 0 || (length & 1) != 0) fail(lineNo, "key must be '-' or an even number of hex digits");
        byte[] bytes = new byte[length >> 1];
        for (int i = 0; i < bytes.length; i++) {
            int hi = Character.digit(hex.charAt(2 * i), 16);
            int lo = Character.digit(hex.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) fail(lineNo, "bad hex digit");
            bytes[i] = (byte) ((hi << 4) | lo);
        }
        return bytes;
    }

    private static void fail(long lineNo, String message) {
        try {
            out.flush(); // the lines answered so far
        } catch (java.io.IOException e) {
            // stdout is gone; the message below still says why we stop
        }
        System.err.println("Murmur2Fixture: line " + lineNo + ": " + message);
        System.exit(2);
    }
}
