// pytest-netbench reference server in Java 17, JDK only:
// com.sun.net.httpserver hello on a thread pool, and a thread-per-connection echo.
//
// usage: java -cp DIR NetbenchServer hello|echo HOST PORT
// Prints "NETBENCH_LISTENING port=<n>" once listening; exits 0 on SIGTERM/SIGINT.

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public final class NetbenchServer {
    private static final int BACKLOG = 4096;
    private static final long MAX_BODY = 64L * 1024 * 1024;
    private static final byte[] HELLO = "Hello World!".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FILLER = new byte[65536];

    static {
        Arrays.fill(FILLER, (byte) 'x');
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        if (status == 204 || status == 304) {
            exchange.sendResponseHeaders(status, -1);
        } else {
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
        }
        exchange.close();
    }

    private static void handle(HttpExchange exchange) throws IOException {
        try (InputStream request = exchange.getRequestBody()) {
            request.readAllBytes();
        }
        String path = exchange.getRequestURI().getPath();
        if (path.equals("/")) {
            send(exchange, 200, HELLO);
        } else if (path.startsWith("/bytes/")) {
            long n = parse(path.substring(7));
            if (n < 0 || n > MAX_BODY) {
                send(exchange, 400, "bad size\n".getBytes(StandardCharsets.US_ASCII));
                return;
            }
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(200, n == 0 ? -1 : n);
            try (OutputStream out = exchange.getResponseBody()) {
                while (n > 0) {
                    int chunk = (int) Math.min(n, FILLER.length);
                    out.write(FILLER, 0, chunk);
                    n -= chunk;
                }
            }
        } else if (path.startsWith("/status/")) {
            long status = parse(path.substring(8));
            if (status < 200 || status > 599) {
                send(exchange, 400, "bad status\n".getBytes(StandardCharsets.US_ASCII));
            } else {
                send(exchange, (int) status, ("Status " + status).getBytes(StandardCharsets.US_ASCII));
            }
        } else {
            send(exchange, 404, "Not Found\n".getBytes(StandardCharsets.US_ASCII));
        }
    }

    private static long parse(String digits) {
        if (digits.isEmpty() || digits.length() > 12 || !digits.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Long.parseLong(digits);
    }

    private static void echo(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            byte[] buffer = new byte[65536];
            int n;
            while ((n = in.read(buffer)) > 0) {
                out.write(buffer, 0, n);
            }
        } catch (IOException peerWentAway) {
            // nothing to do: the connection is over
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3 || !(args[0].equals("hello") || args[0].equals("echo"))) {
            System.err.println("usage: java NetbenchServer hello|echo HOST PORT");
            System.exit(2);
        }
        // The JVM exits with 143 on SIGTERM; halting from a shutdown hook makes it a clean 0.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));
        InetSocketAddress address =
                new InetSocketAddress(InetAddress.getByName(args[1]), Integer.parseInt(args[2]));
        if (args[0].equals("hello")) {
            HttpServer server = HttpServer.create(address, BACKLOG);
            int threads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
            server.setExecutor(new ThreadPoolExecutor(
                    threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>()));
            server.createContext("/", NetbenchServer::handle);
            server.start();
            announce(server.getAddress().getPort());
        } else {
            ServerSocket listener = new ServerSocket(address.getPort(), BACKLOG, address.getAddress());
            announce(listener.getLocalPort());
            while (true) {
                Socket socket = listener.accept();
                socket.setTcpNoDelay(true);
                Thread thread = new Thread(() -> echo(socket));
                thread.setDaemon(true);
                thread.start();
            }
        }
    }

    private static void announce(int port) {
        System.out.println("NETBENCH_LISTENING port=" + port);
        System.out.flush();
    }
}
