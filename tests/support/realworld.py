"""A config shaped like what HAPTIC's ingress templates render, valid for HAProxy 2.6."""

REALWORLD_CFG = """\
# _version=7
global
    log stdout format raw local0
    maxconn 20000
    nbthread 2
    stats socket /tmp/haptic-admin.sock mode 600 level admin expose-fd listeners
    ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets
    tune.ssl.default-dh-param 2048

defaults
    mode http
    log global
    option httplog
    option dontlognull
    option http-server-close
    timeout connect 5s
    timeout client 50s
    timeout server 50s
    timeout http-request 10s
    default-server init-addr last,libc,none

userlist haptic_auth_default_basic
    group admins users alice
    user alice password $5$uLHx9TRjkFQ3$Y6m0vMkzTrSg3fr5BdDO8q1TpSWnYKY2e5EoWS8Mx5A groups admins
    user bob insecure-password s3cret

resolvers kubernetes
    nameserver dns1 127.0.0.1:53
    accepted_payload_size 8192
    resolve_retries 3
    timeout resolve 1s
    timeout retry 1s
    hold valid 10s

frontend http
    bind :8080 name http
    bind :8443 name https-alt
    acl is_api path_beg /api
    acl is_api path_beg /v2/api
    acl host_echo hdr(host) -i echo.example.com
    acl host_admin hdr(host) -i admin.example.com
    http-request set-header X-Forwarded-Proto http
    http-request set-var(txn.host) req.hdr(host),lower
    http-request auth realm admin if host_admin !{ http_auth(haptic_auth_default_basic) }
    http-request deny deny_status 403 if { src 192.0.2.0/24 }
    http-response set-header X-Served-By haptic
    capture request header Host len 64
    use_backend default_echo_80 if host_echo
    use_backend default_api_8080 if is_api
    default_backend default_fallback

backend default_echo_80
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    default-server check inter 2s fall 3 rise 2
    http-request set-header X-Backend echo
    server SRV_1 127.0.0.1:9001 weight 10
    server SRV_2 127.0.0.1:9002 weight 10
    server SRV_3 127.0.0.1:1 disabled
    server SRV_4 127.0.0.1:1 disabled

backend default_api_8080
    balance leastconn
    stick-table type ip size 100k expire 30m
    stick on src
    server-template api 1-3 127.0.0.1:9100 check resolvers kubernetes init-addr none
    server SRV_1 127.0.0.1:9100 check resolvers kubernetes

backend default_fallback
    http-request return status 404 content-type text/plain string "no route"
"""
