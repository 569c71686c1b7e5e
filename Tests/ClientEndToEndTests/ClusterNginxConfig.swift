/// The nginx configuration of docs/CLUSTER.md, for the cluster test: `http` holds what a
/// deployment uses; `forTest` wraps it with what running nginx unprivileged in the foreground
/// of a test needs (files in the test's directory).
enum ClusterNginxConfig {
    struct Node {
        var name: String
        var port: Int
    }

    /// Creates go to any node (round robin); `/<node>/…` goes to that node only, with the
    /// prefix removed: the control link of node `n` is `<balancer host:port>/<n>`. A node that
    /// refuses connections is skipped by the pool for `failTimeout` seconds, and its own path
    /// then reaches the other nodes (`backup`): they answer the dead node's clients "session not
    /// found", on which clients create a new session at once.
    static func http(listenPort: Int, nodes: [Node], failTimeout: Int = 10) -> String {
        var c = """
                map $http_upgrade $connection_upgrade {
                    default upgrade;
                    ''      close;
                }

                upstream lightstreamer_nodes {
            """
        for n in nodes { c += "\n        server 127.0.0.1:\(n.port) max_fails=1 fail_timeout=\(failTimeout)s;" }
        c += "\n    }\n"
        for n in nodes {
            c += "\n    upstream lightstreamer_\(n.name) {\n        server 127.0.0.1:\(n.port) max_fails=1 fail_timeout=\(failTimeout)s;"
            for other in nodes where other.name != n.name { c += "\n        server 127.0.0.1:\(other.port) backup;" }
            c += "\n    }\n"
        }
        c += """

                server {
                    listen 127.0.0.1:\(listenPort);

                    proxy_http_version 1.1;
                    proxy_set_header Upgrade $http_upgrade;
                    proxy_set_header Connection $connection_upgrade;
                    proxy_set_header Host $host;
                    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                    proxy_buffering off;
                    proxy_request_buffering off;
                    proxy_read_timeout 1h;
                    proxy_send_timeout 1h;

                    location /lightstreamer {
                        proxy_pass http://lightstreamer_nodes;
                    }
            """
        for n in nodes {
            c += """

                        location /\(n.name)/ {
                            proxy_pass http://lightstreamer_\(n.name)/;
                        }
                """
        }
        return c + "\n    }\n"
    }

    static func forTest(listenPort: Int, nodes: [Node], directory: String, failTimeout: Int = 10) -> String {
        """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log notice;
        events { worker_connections 1024; }
        http {
            access_log \(directory)/access.log;
            client_body_temp_path \(directory)/tmp-body;
            proxy_temp_path \(directory)/tmp-proxy;
            fastcgi_temp_path \(directory)/tmp-fastcgi;
            uwsgi_temp_path \(directory)/tmp-uwsgi;
            scgi_temp_path \(directory)/tmp-scgi;
        \(http(listenPort: listenPort, nodes: nodes, failTimeout: failTimeout))
        }

        """
    }
}
