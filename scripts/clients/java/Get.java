// The Java row of the client table: GET each URL with java.net.http.HttpClient
// and print its status code (one line per URL). Run as a single-file program:
//
//   java -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=9309 \
//        -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=9309 \
//        -Djavax.net.ssl.trustStore=robotsgate.p12 -Djavax.net.ssl.trustStorePassword=changeit \
//        Get.java URL...
//
// The proxy comes from those system properties through ProxySelector.getDefault();
// robotsgate's CA from the trust store.
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class Get {
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: java Get.java URL...");
            System.exit(2);
        }
        HttpClient client = HttpClient.newBuilder()
                .proxy(ProxySelector.getDefault())
                .connectTimeout(Duration.ofSeconds(30))
                .build();
        for (String url : args) {
            HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build();
            HttpResponse<Void> resp = client.send(req, HttpResponse.BodyHandlers.discarding());
            System.out.println(resp.statusCode());
        }
    }
}
