#!/usr/bin/python3
"""Offline checks that posenc's deployment files agree with each other.

Parses deploy/k8s/*.yaml and deploy/k8s/sidecar/*.yaml (PyYAML), renders
docker/compose.yaml and docker/compose.shm.yaml with `docker-compose config`
(and the kustomizations with `kubectl kustomize` when kubectl is installed),
and reads docker/Dockerfile, then checks: gRPC probes, ports consistent with
the Services and the image, resources that fit --cache_bytes, the HPA
target, one image name everywhere, a Dockerfile the classic builder can
build, an HAProxy config that logs no line per call (so none per reset
stream), and the shared-memory sidecar (Kubernetes and Compose): one tmpfs
for --shm_dir mounted read-only in a caller of another non-root user, sized
over --cache_bytes; metrics on (--metrics_listen) in the image, compose
and Kubernetes, with Prometheus' scrape annotations. Usage: check_deploy.py REPO_ROOT
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import yaml

GRPC_PORT = 50051
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def quantity_bytes(text):
    """Kubernetes memory quantity ("1Gi", "768Mi", "1000000") in bytes."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    match = re.fullmatch(r"(\d+)([KMGT]i?|k)?", str(text))
    if not match:
        raise ValueError(f"bad memory quantity {text!r}")
    return int(match.group(1)) * units.get(match.group(2) or "", 1)


def docker_bytes(text):
    """Docker/Compose byte size ("768m", "1g", "1048576") in bytes."""
    match = re.fullmatch(r"(\d+)([kmg]?)b?", str(text).lower())
    if not match:
        raise ValueError(f"bad byte size {text!r}")
    return int(match.group(1)) * {"": 1, "k": 2**10, "m": 2**20,
                                  "g": 2**30}[match.group(2)]


def flag_value(args, name):
    for arg in args:
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    return None


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v
                                  for k, v in selector.items())


def load_k8s(root, *subdirs):
    objects = {}
    k8s = os.path.join(root, "deploy", "k8s", *subdirs)
    files = sorted(glob.glob(os.path.join(k8s, "*.yaml")))
    check(files, f"no manifests in {k8s}")
    for path in files:
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if not doc:
                    continue
                for key in ("apiVersion", "kind"):
                    check(key in doc, f"{path}: no {key}")
                name = doc.get("metadata", {}).get("name", "")
                objects[(doc["kind"], name)] = (os.path.basename(path), doc)
    return objects


def check_k8s(objects):
    deployments = [d for (kind, _), (_, d) in objects.items()
                   if kind == "Deployment"]
    if not check(len(deployments) == 1, "want exactly one Deployment"):
        return None
    deployment = deployments[0]
    name = deployment["metadata"]["name"]
    check(deployment["apiVersion"] == "apps/v1", "Deployment not apps/v1")
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    check(selects(spec["selector"]["matchLabels"], labels),
          "Deployment selector does not match its pod labels")
    pod = spec["template"]["spec"]
    containers = pod["containers"]
    check(len(containers) == 1, "want one container")
    container = containers[0]
    args = container.get("args", [])

    ports = {p.get("name"): p["containerPort"] for p in container["ports"]}
    check(ports.get("grpc") == GRPC_PORT,
          f"container port 'grpc' is not {GRPC_PORT}")
    for probe in ("readinessProbe", "livenessProbe"):
        body = container.get(probe)
        if check(body, f"no {probe}"):
            check("grpc" in body and not {"httpGet", "tcpSocket", "exec"} &
                  body.keys(), f"{probe} is not a grpc probe")
            check(body.get("grpc", {}).get("port") == GRPC_PORT,
                  f"{probe} grpc port is not {GRPC_PORT}")

    resources = container.get("resources", {})
    for kind in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            check(resource in resources.get(kind, {}),
                  f"resources.{kind}.{resource} missing")
    cache = flag_value(args, "cache_bytes")
    if check(cache is not None, "Deployment args set no --cache_bytes"):
        limit = quantity_bytes(resources["limits"]["memory"])
        check(limit >= int(cache) + (256 << 20),
              f"memory limit {limit} leaves < 256MiB over cache {cache}")
    drain = float(flag_value(args, "lame_duck_seconds") or 2) + \
        float(flag_value(args, "grace_seconds") or 10)
    check(pod.get("terminationGracePeriodSeconds", 30) > drain,
          "terminationGracePeriodSeconds <= --lame_duck_seconds + "
          "--grace_seconds")
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True,
          "pod does not require runAsNonRoot")
    check(flag_value(args, "listen") is None,
          "Deployment overrides --listen (the image listens on 0.0.0.0:50051)")

    services = [(f, d) for (kind, _), (f, d) in objects.items()
                if kind == "Service"]
    headless = [d for _, d in services if d["spec"].get("clusterIP") == "None"]
    cluster_ip = [d for _, d in services
                  if d["spec"].get("clusterIP") != "None" and
                  d["spec"].get("type", "ClusterIP") == "ClusterIP"]
    check(len(headless) == 1, "want one headless Service (clusterIP: None)")
    check(len(cluster_ip) == 1, "want one ClusterIP Service")
    for _, service in services:
        sname = service["metadata"]["name"]
        check(selects(service["spec"].get("selector", {}), labels),
              f"Service {sname} does not select the Deployment's pods")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            resolved = ports.get(target) if isinstance(target, str) else target
            check(resolved == GRPC_PORT and port["port"] == GRPC_PORT,
                  f"Service {sname} port {port} does not reach {GRPC_PORT}")

    hpas = [d for (kind, _), (_, d) in objects.items()
            if kind == "HorizontalPodAutoscaler"]
    if check(len(hpas) == 1, "want one HorizontalPodAutoscaler"):
        hpa = hpas[0]
        check(hpa["apiVersion"] == "autoscaling/v2", "HPA not autoscaling/v2")
        ref = hpa["spec"]["scaleTargetRef"]
        check(ref == {"apiVersion": "apps/v1", "kind": "Deployment",
                      "name": name},
              f"HPA targets {ref}, not Deployment {name}")
        check(any(m.get("type") == "Resource" and
                  m["resource"]["name"] == "cpu"
                  for m in hpa["spec"]["metrics"]), "HPA has no CPU metric")
        check(1 <= hpa["spec"].get("minReplicas", 1) <=
              hpa["spec"]["maxReplicas"], "HPA replica bounds")
    return container["image"]


def check_kustomization(root, objects, *subdirs):
    directory = os.path.join(root, "deploy", "k8s", *subdirs)
    path = os.path.join(directory, "kustomization.yaml")
    if not os.path.exists(path):
        return
    with open(path) as f:
        listed = set(yaml.safe_load(f)["resources"])
    files = {f for f, _ in objects.values() if f != "kustomization.yaml"}
    check(listed == files, f"{path} lists {sorted(listed)}, "
          f"files are {sorted(files)}")
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print(f"kubectl not installed: skipped kubectl kustomize {directory}")
        return
    result = subprocess.run([kubectl, "kustomize", directory],
                            capture_output=True, text=True, timeout=60)
    if check(result.returncode == 0,
             f"kubectl kustomize {directory} failed: {result.stderr}"):
        rendered = {(d["kind"], d["metadata"]["name"])
                    for d in yaml.safe_load_all(result.stdout) if d}
        wanted = {key for key, (f, _) in objects.items()
                  if f != "kustomization.yaml"}
        check(rendered == wanted, f"kubectl kustomize {directory} renders "
              f"{sorted(rendered)}, not {sorted(wanted)}")


def hardened(security, label):
    """A container's securityContext: no privilege escalation, a read-only
    root filesystem, every capability dropped."""
    check(security.get("allowPrivilegeEscalation") is False,
          f"{label}: allowPrivilegeEscalation is not false")
    check(security.get("readOnlyRootFilesystem") is True,
          f"{label}: readOnlyRootFilesystem is not true")
    check(security.get("capabilities", {}).get("drop") == ["ALL"],
          f"{label}: capabilities do not drop ALL")


def check_sidecar(root, image):
    """deploy/k8s/sidecar: one pod, the server with --shm_dir on a
    memory-backed emptyDir and a caller of another non-root uid mounting it
    read-only at the same path, calling 127.0.0.1 with --shared-memory."""
    objects = load_k8s(root, "sidecar")
    check_kustomization(root, objects, "sidecar")
    deployments = [d for (kind, _), (_, d) in objects.items()
                   if kind == "Deployment"]
    if not check(len(deployments) == 1, "sidecar: want one Deployment"):
        return
    spec = deployments[0]["spec"]
    check(selects(spec["selector"]["matchLabels"],
                  spec["template"]["metadata"]["labels"]),
          "sidecar: selector does not match its pod labels")
    pod = spec["template"]["spec"]
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True,
          "sidecar: pod does not require runAsNonRoot")
    servers = [c for c in pod["containers"]
               if flag_value(c.get("args", []), "shm_dir")]
    callers = [c for c in pod["containers"] if c not in servers]
    if not check(len(servers) == 1 and len(callers) == 1,
                 "sidecar: want one container with --shm_dir and one "
                 "caller"):
        return
    server, caller = servers[0], callers[0]
    args = server["args"]
    shm_dir = flag_value(args, "shm_dir")
    for container in (server, caller):
        check(container["image"] == image,
              f"sidecar: {container['name']} image {container['image']} "
              f"!= {image}")
        hardened(container.get("securityContext", {}),
                 f"sidecar {container['name']}")
    uids = [c.get("securityContext", {}).get("runAsUser")
            for c in (server, caller)]
    check(all(isinstance(u, int) and u > 0 for u in uids) and
          uids[0] != uids[1],
          f"sidecar: runAsUser {uids}: want two different non-root uids "
          "(the file modes, not the uid, must keep the caller out)")
    for probe in ("readinessProbe", "livenessProbe"):
        check(server.get(probe, {}).get("grpc", {}).get("port") == GRPC_PORT,
              f"sidecar: server {probe} is not grpc on {GRPC_PORT}")
    drain = float(flag_value(args, "lame_duck_seconds") or 2) + \
        float(flag_value(args, "grace_seconds") or 10)
    check(pod.get("terminationGracePeriodSeconds", 30) > drain,
          "sidecar: terminationGracePeriodSeconds <= lame duck + grace")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {c["name"]: {m["mountPath"]: m for m in c.get("volumeMounts", [])}
              for c in (server, caller)}
    server_mount = mounts[server["name"]].get(shm_dir)
    caller_mount = mounts[caller["name"]].get(shm_dir)
    if not check(server_mount and caller_mount and
                 server_mount["name"] == caller_mount["name"],
                 f"sidecar: server and caller do not mount one volume at "
                 f"--shm_dir={shm_dir}"):
        return
    check(not server_mount.get("readOnly"),
          "sidecar: the server's --shm_dir mount is read-only")
    check(caller_mount.get("readOnly") is True,
          "sidecar: the caller's mount is not readOnly: true")
    empty_dir = volumes.get(server_mount["name"], {}).get("emptyDir")
    if not check(empty_dir and empty_dir.get("medium") == "Memory",
                 "sidecar: the shared volume is no emptyDir with medium: "
                 "Memory"):
        return
    cache = int(flag_value(args, "cache_bytes") or 512 << 20)
    size = quantity_bytes(empty_dir.get("sizeLimit", "0"))
    check(size >= cache + (64 << 20),
          f"sidecar: emptyDir sizeLimit {size} leaves < 64MiB over "
          f"--cache_bytes {cache} for evicted tables still mapped")
    # The tmpfs pages are charged to the server, which writes them.
    limit = quantity_bytes(server.get("resources", {}).get(
        "limits", {}).get("memory", "0"))
    check(limit >= size + (256 << 20),
          f"sidecar: server memory limit {limit} leaves < 256MiB over the "
          f"tmpfs's sizeLimit {size}")
    script = " ".join(caller.get("command", []) + caller.get("args", []))
    check("--shared-memory" in script and "127.0.0.1:50051" in script,
          "sidecar: the caller does not call 127.0.0.1:50051 with "
          "--shared-memory")


def check_compose_shm(root, image):
    """docker/compose.shm.yaml: the sidecar in Compose, one tmpfs volume
    mounted by both, read-only in the caller."""
    path = os.path.join(root, "docker", "compose.shm.yaml")
    result = subprocess.run(["docker-compose", "-f", path, "config"],
                            capture_output=True, text=True, timeout=60)
    if not check(result.returncode == 0,
                 f"docker-compose config of {path} failed: "
                 f"{result.stderr.strip()}"):
        return
    config = yaml.safe_load(result.stdout)
    services = config["services"]
    server, caller = services.get("posenc", {}), services.get("caller", {})
    shm_dir = flag_value(server.get("command", []), "shm_dir")
    if not check(shm_dir, "compose.shm posenc has no --shm_dir"):
        return
    for name, service in (("posenc", server), ("caller", caller)):
        check(service.get("image") == image,
              f"compose.shm {name} image {service.get('image')} != {image}")
        check(service.get("read_only") is True and
              service.get("cap_drop") == ["ALL"] and
              "no-new-privileges:true" in service.get("security_opt", []),
              f"compose.shm {name}: not read_only, cap_drop ALL, "
              "no-new-privileges")
    users = [str(s.get("user", "")).split(":")[0] for s in (server, caller)]
    check(all(u.isdigit() and u != "0" for u in users) and
          users[0] != users[1],
          f"compose.shm users {users}: want two different non-root uids")
    mounts = {}
    for name, service in (("posenc", server), ("caller", caller)):
        for volume in service.get("volumes", []):
            source, target, *mode = str(volume).split(":")
            if target == shm_dir:
                mounts[name] = (source, mode[0] if mode else "rw")
    volume = mounts.get("posenc", ("",))[0]
    check(mounts.get("posenc") == (volume, "rw") and
          mounts.get("caller") == (volume, "ro"),
          f"compose.shm: want one volume at {shm_dir}, rw in posenc and ro "
          f"in caller: {mounts}")
    options = (config.get("volumes", {}).get(volume) or {}).get(
        "driver_opts", {})
    check(options.get("type") == "tmpfs" and options.get("device") == "tmpfs",
          f"compose.shm volume {volume} is not a tmpfs: {options}")
    size = re.search(r"(?:^|,)size=(\d+[kmg]?)(?:,|$)", options.get("o", ""))
    cache = int(flag_value(server.get("command", []), "cache_bytes") or
                512 << 20)
    if check(size, f"compose.shm volume {volume} has no size= option"):
        size = docker_bytes(size.group(1))
        check(size >= cache + (64 << 20),
              f"compose.shm tmpfs size {size} leaves < 64MiB over "
              f"--cache_bytes {cache} for evicted tables still mapped")
        # The tmpfs pages are charged to the server, which writes them.
        check(docker_bytes(server.get("mem_limit", "0")) >= size + (256 << 20),
              f"compose.shm posenc mem_limit {server.get('mem_limit')} "
              f"leaves < 256MiB over the tmpfs's {size} bytes")
    check(caller.get("network_mode") == "service:posenc",
          "compose.shm caller is not in posenc's network namespace")
    check(caller.get("depends_on", {}).get("posenc", {}).get("condition") ==
          "service_healthy", "compose.shm caller does not wait for posenc")


def duration_seconds(text):
    """Compose duration ("20s", "1m30s") in seconds."""
    total = 0.0
    for value, unit in re.findall(r"([\d.]+)(h|m|s|ms)", str(text)):
        total += float(value) * {"h": 3600, "m": 60, "s": 1, "ms": 1e-3}[unit]
    return total


REPLICAS = ("posenc-1", "posenc-2", "posenc-3")


def check_compose(root, image):
    result = subprocess.run(
        ["docker-compose", "-f", os.path.join(root, "docker", "compose.yaml"),
         "config"], capture_output=True, text=True, timeout=60)
    if not check(result.returncode == 0,
                 f"docker-compose config failed: {result.stderr.strip()}"):
        return
    services = yaml.safe_load(result.stdout)["services"]
    # Three replicas of the posenc image, each draining within its stop
    # grace period.
    for name in REPLICAS:
        server = services.get(name, {})
        check(server.get("image") == image,
              f"compose {name} image {server.get('image')} != Deployment "
              f"image {image}")
        test = server.get("healthcheck", {}).get("test", [])
        check("health" in test and "posenc" in test,
              f"compose {name} healthcheck does not use `posenc health`")
        command = server.get("command", [])
        drain = float(flag_value(command, "lame_duck_seconds") or 2) + \
            float(flag_value(command, "grace_seconds") or 10)
        check(duration_seconds(server.get("stop_grace_period", "10s")) > drain,
              f"compose {name} stop_grace_period <= lame duck + grace")
        check(not server.get("ports"),
              f"compose {name} publishes ports: clients must use the proxy")
    # The proxy, named posenc so that posenc:50051 (ghz configs) reaches it.
    proxy = services.get("posenc", {})
    check(proxy.get("build", {}).get("dockerfile") == "docker/haproxy.Dockerfile",
          "compose posenc is not the HAProxy image (docker/haproxy.Dockerfile)")
    check(any(p.endswith(f":{GRPC_PORT}/tcp") or p.endswith(f":{GRPC_PORT}")
              or (isinstance(p, dict) and p.get("target") == GRPC_PORT)
              for p in proxy.get("ports", [])),
          f"compose proxy does not publish {GRPC_PORT}")
    env = proxy.get("environment", {})
    check([env.get(f"POSENC_{i + 1}") for i in range(3)] ==
          [f"{r}:{GRPC_PORT}" for r in REPLICAS],
          f"proxy POSENC_1..3 do not name the replicas: {env}")
    deps = proxy.get("depends_on", {})
    check(all(deps.get(r, {}).get("condition") == "service_healthy"
              for r in REPLICAS), "proxy does not wait for healthy replicas")
    ghz = services.get("ghz", {})
    check("posenc" in ghz.get("depends_on", {}), "ghz does not wait for posenc")
    check(any(str(v).endswith(":/ghz:ro") or str(v).endswith(":/ghz")
              for v in ghz.get("volumes", [])), "bench/ghz not mounted at /ghz")
    check(any(f"posenc:{GRPC_PORT}" in a for a in ghz.get("command", [])),
          "ghz does not target posenc:50051 (the proxy)")


def check_haproxy(root):
    """deploy/haproxy/haproxy.cfg: the routing the tests rely on, and
    `haproxy -c` on it when HAProxy is installed."""
    path = os.path.join(root, "deploy", "haproxy", "haproxy.cfg")
    with open(path) as f:
        text = f.read()
    for needle in ("tune.bufsize 49152", "balance hash req.fhdr(x-posenc-table)",
                   "use_backend posenc_rows_by_key if rows_call has_key",
                   "retry-on conn-failure empty-response",
                   "hash-type consistent", "balance hash req.body,ungrpc(1)",
                   "http-request wait-for-body", "option redispatch",
                   "tcp-check expect rbinary 000000000208(01|02)",
                   "tcp-check expect min-recv 1 binary 00000000020801",
                   "timeout check 2s", "proto h2"):
        check(needle in text, f"haproxy.cfg lacks `{needle}`")
    check(text.count("tcp-check send-binary") == 3,
          "every haproxy backend needs the gRPC health tcp-check")
    check_haproxy_logging(text)
    # The GetRows backend shares posenc_by_key's ring and health: each of its
    # servers has the same id and tracks the checked server.
    rows = text.split("\nbackend posenc_rows_by_key", 1)[-1].split("\nbackend ")[0]
    for n in (1, 2, 3):
        check(f'server posenc{n} "${{POSENC_{n}}}" id {n} '
              f"track posenc_by_key/posenc{n}" in rows,
              f"posenc_rows_by_key: posenc{n} must have id {n} and track "
              f"posenc_by_key/posenc{n}")
        check(f'server posenc{n} "${{POSENC_{n}}}" id {n}\n' in text,
              f"posenc_by_key: posenc{n} must have id {n}")
    haproxy = "/usr/sbin/haproxy"
    if not os.path.exists(haproxy):
        print("haproxy not installed: skipped haproxy -c")
        return
    env = dict(os.environ, POSENC_PROXY_BIND="127.0.0.1:50051",
               POSENC_1="127.0.0.1:50052", POSENC_2="127.0.0.1:50053",
               POSENC_3="127.0.0.1:50054")
    result = subprocess.run([haproxy, "-c", "-f", path], env=env,
                            capture_output=True, text=True, timeout=30)
    check(result.returncode == 0,
          f"haproxy -c failed: {result.stdout}{result.stderr}")


LOG_LEVELS = ("emerg", "alert", "crit", "err", "warning", "notice", "info",
              "debug")
LOG_FACILITIES = ("kern", "user", "mail", "daemon", "auth", "syslog", "lpr",
                  "news", "uucp", "cron", "auth2", "ftp", "ntp", "audit",
                  "alert", "cron2", "local0", "local1", "local2", "local3",
                  "local4", "local5", "local6", "local7")


def haproxy_sections(text):
    """[(keyword, name, [directive lines])] of an HAProxy config."""
    sections = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] in ("global", "defaults", "frontend", "backend", "listen",
                        "resolvers", "peers", "userlist", "ring", "program",
                        "http-errors", "cache", "mailers"):
            sections.append((words[0], " ".join(words[1:]), []))
        elif sections:
            sections[-1][2].append(line)
    return sections


def log_sample_ratio(words):
    """The fraction of lines a `log` directive keeps (1 unless `sample`)."""
    if "sample" not in words:
        return 1.0
    ranges, size = words[words.index("sample") + 1].rsplit(":", 1)
    kept = 0
    for r in ranges.split(","):
        low, _, high = r.partition("-")
        kept += int(high or low) - int(low) + 1
    return kept / int(size)


def log_max_level(words):
    """The most verbose level a `log` directive lets through (index in
    LOG_LEVELS): the word after the facility, `debug` if none."""
    # Skip the address and the optional len/format/sample arguments.
    i = 2
    while i < len(words) and words[i] in ("len", "format", "sample"):
        i += 2
    if i < len(words) and words[i] in LOG_FACILITIES:
        i += 1
    if i < len(words):
        return LOG_LEVELS.index(words[i])
    return len(LOG_LEVELS) - 1


def check_haproxy_logging(text):
    """No log line per failed call, hence none per reset stream (a stream the
    client resets is a failed call to HAProxy: one line each let a
    rapid-reset client write 2 M lines in 10 s). Successful calls are not
    logged (dontlog-normal); a `log` line of a proxy that lets failed calls
    through (level err, with log-separate-errors, or info) keeps at most one
    in 100 (`sample`); `log global` would send them to the global loggers,
    which are not sampled."""
    err = LOG_LEVELS.index("err")
    for kind, name, lines in haproxy_sections(text):
        if kind not in ("defaults", "frontend", "listen"):
            continue
        label = f"haproxy.cfg {kind} {name}".rstrip()
        if kind == "defaults":
            check("option dontlog-normal" in lines,
                  f"{label}: no `option dontlog-normal` (a line per call)")
        for line in lines:
            words = line.split()
            if words[0] != "log":
                continue
            if words[1:] == ["global"]:
                check(False, f"{label}: `log global` sends every failed call "
                      "(every reset stream) to the unsampled global loggers")
                continue
            if log_max_level(words) >= err:
                check(log_sample_ratio(words) <= 0.01,
                      f"{label}: `{line}` logs failed calls (level err or "
                      "more verbose) without sampling them to 1 in 100 or "
                      "fewer: a line per reset stream")


def check_nginx(root):
    """deploy/nginx/posenc.conf: the same hash key, and `nginx -t` on a copy
    whose upstream names resolve offline."""
    path = os.path.join(root, "deploy", "nginx", "posenc.conf")
    with open(path) as f:
        text = f.read()
    check("hash $http_x_posenc_table consistent;" in text,
          "nginx upstream does not hash x-posenc-table")
    nginx = "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        print("nginx not installed: skipped nginx -t")
        return
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(re.sub(r"posenc-[123]:", "127.0.0.1:", text).replace(
                "/tmp/posenc-nginx.pid", os.path.join(tmp, "nginx.pid")))
        result = subprocess.run([nginx, "-t", "-c", conf, "-e", "stderr",
                                 "-p", tmp], capture_output=True, text=True,
                                timeout=30)
    check(result.returncode == 0, f"nginx -t failed: {result.stderr}")


def check_consistent_hash(root, objects):
    """deploy/k8s/consistent-hash: Istio and Gateway API routes hash the
    x-posenc-table header to the Service the Deployment backs."""
    services = {name: doc for (kind, name), (_, doc) in objects.items()
                if kind == "Service" and doc["spec"].get("clusterIP") != "None"}
    docs = []
    for path in sorted(glob.glob(os.path.join(
            root, "deploy", "k8s", "consistent-hash", "*.yaml"))):
        with open(path) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    rule = kinds.get("DestinationRule")
    if check(rule, "no Istio DestinationRule"):
        lb = rule["spec"]["trafficPolicy"]["loadBalancer"]
        check(lb.get("consistentHash", {}).get("httpHeaderName") ==
              "x-posenc-table", "DestinationRule does not hash x-posenc-table")
        check(rule["spec"]["host"] in services,
              f"DestinationRule host {rule['spec']['host']} is no Service")
    policy = kinds.get("BackendTrafficPolicy")
    if check(policy, "no Envoy Gateway BackendTrafficPolicy"):
        lb = policy["spec"]["loadBalancer"]
        check(lb["type"] == "ConsistentHash" and
              lb["consistentHash"]["header"]["name"] == "x-posenc-table",
              "BackendTrafficPolicy does not hash x-posenc-table")
        check(policy["spec"]["healthCheck"]["active"]["type"] == "GRPC",
              "BackendTrafficPolicy has no active gRPC health check")
    route = kinds.get("GRPCRoute")
    if check(route, "no GRPCRoute"):
        for rule_ in route["spec"]["rules"]:
            for ref in rule_["backendRefs"]:
                check(ref["name"] in services and ref["port"] == GRPC_PORT,
                      f"GRPCRoute backend {ref} is not the posenc Service")


def check_dockerfile(root):
    with open(os.path.join(root, "docker", "Dockerfile")) as f:
        text = f.read()
    check(not re.search(r"^#\s*syntax=", text, re.M),
          "Dockerfile has a # syntax= line (BuildKit only)")
    check("--mount" not in text, "Dockerfile uses RUN --mount (BuildKit only)")
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    check(froms and all(f == "debian:bookworm-slim" for f in froms),
          f"stages are not all debian:bookworm-slim: {froms}")
    check(re.search(r"^EXPOSE\s.*\b50051\b", text, re.M), "no EXPOSE 50051")
    check(re.search(r"^HEALTHCHECK\b.*posenc\", \"health", text, re.M | re.S),
          "HEALTHCHECK does not run `posenc health`")
    user = re.findall(r"^USER\s+(\S+)", text, re.M)
    check(user and user[-1].split(":")[0] not in ("root", "0"),
          "runtime stage does not switch to a non-root USER")
    check(re.search(r'^ENTRYPOINT\s.*"--listen=0\.0\.0\.0:50051"', text, re.M),
          "ENTRYPOINT does not listen on 0.0.0.0:50051")
    # Two stages: the builder compiles (the project's own scripts, as
    # scripts/serve.sh runs them); the runtime stage only installs Debian
    # packages and copies the builder's two binaries, and is the stage
    # docker/build-image.sh reuses verbatim after its own builder stage.
    stages = re.split(r"^(?=FROM\s)", text, flags=re.M)[1:]
    names = [re.match(r"FROM\s+\S+\s+AS\s+(\S+)", s) for s in stages]
    check([n.group(1) if n else None for n in names] == ["builder", "runtime"],
          "stages are not `builder` then `runtime`")
    if len(stages) != 2:
        return

    def instructions(stage):
        return "\n".join(line for line in stage.splitlines()
                         if not line.lstrip().startswith("#"))

    builder, runtime = (instructions(s) for s in stages)
    for step in (r"scripts/bootstrap\.sh --runtime-only",
                 r"scripts/build-grpc\.sh", r"cmake --preset server",
                 r"cmake --build --preset server",
                 r"docker/runtime-packages\.sh"):
        check(re.search(r"^RUN\s.*" + step, builder, re.M | re.S),
              f"the builder stage does not run {step}")
    check(not re.search(r"^RUN\s.*scripts/build-grpc\.sh\s+--", builder,
                        re.M),
          "the builder builds a gRPC flavour other than the default Release")
    check(re.search(r"^COPY\s+--from=builder\s+/out/posenc_server "
                    r"/out/posenc\s+/usr/local/bin/", runtime, re.M),
          "the runtime stage does not copy exactly the builder's "
          "posenc_server and posenc")
    check(not re.search(r"\b(ninja|cmake|make|g\+\+|build-grpc)\b", runtime),
          "the runtime stage compiles something")


def metrics_port(args, label):
    """The port of --metrics_listen=HOST:PORT in `args`, or None (failed)."""
    listen = flag_value(args, "metrics_listen")
    if not check(listen and re.fullmatch(r"0\.0\.0\.0:\d+", listen),
                 f"{label}: metrics off (no --metrics_listen=0.0.0.0:PORT)"):
        return None
    return int(listen.rsplit(":", 1)[1])


def check_metrics(root):
    """Metrics are on in every shipped config: the image's ENTRYPOINT, the
    compose replicas and the Kubernetes Deployments (main and sidecar), with
    Prometheus' scrape annotations pointing at the container's `metrics`
    port."""
    with open(os.path.join(root, "docker", "Dockerfile")) as f:
        text = f.read()
    entrypoint = re.search(r"^ENTRYPOINT\s+(\[.*\])", text, re.M)
    if check(entrypoint, "Dockerfile has no exec-form ENTRYPOINT"):
        port = metrics_port(yaml.safe_load(entrypoint.group(1)),
                            "Dockerfile ENTRYPOINT")
        check(port is None or re.search(rf"^EXPOSE\s.*\b{port}\b", text, re.M),
              f"Dockerfile does not EXPOSE the metrics port {port}")
    for name in ("compose.yaml", "compose.shm.yaml"):
        with open(os.path.join(root, "docker", name)) as f:
            services = yaml.safe_load(f)["services"]
        for service_name, service in services.items():
            if str(service.get("image", "")).startswith("${POSENC_IMAGE") and \
                    "command" in service and \
                    any(str(a).startswith("--") for a in service["command"]):
                metrics_port(service["command"], f"{name} {service_name}")
    for subdir in ((), ("sidecar",)):
        for (kind, _), (path, doc) in load_k8s(root, *subdir).items():
            if kind != "Deployment":
                continue
            template = doc["spec"]["template"]
            container = next((c for c in template["spec"]["containers"]
                              if any(str(a).startswith("--cache_bytes")
                                     for a in c.get("args", []))), None)
            if not check(container, f"{path}: no posenc_server container"):
                continue
            port = metrics_port(container.get("args", []), path)
            ports = {p.get("name"): p["containerPort"]
                     for p in container.get("ports", [])}
            check(port is None or ports.get("metrics") == port,
                  f"{path}: --metrics_listen port {port} is not the "
                  f"container's `metrics` port {ports.get('metrics')}")
            notes = template["metadata"].get("annotations", {})
            check(notes.get("prometheus.io/scrape") == "true" and
                  notes.get("prometheus.io/port") == str(port) and
                  notes.get("prometheus.io/path") == "/metrics",
                  f"{path}: pod template lacks the Prometheus scrape "
                  f"annotations for port {port} at /metrics: {notes}")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    objects = load_k8s(root)
    image = check_k8s(objects)
    check_kustomization(root, objects)
    check_compose(root, image)
    check_sidecar(root, image)
    check_compose_shm(root, image)
    check_dockerfile(root)
    check_metrics(root)
    check_haproxy(root)
    check_nginx(root)
    check_consistent_hash(root, objects)
    for failure in failures:
        print(f"FAIL: {failure}")
    kinds = sorted({kind for kind, _ in objects})
    print(f"checked {len(objects)} objects ({', '.join(kinds)}), "
          f"docker/compose.yaml, docker/compose.shm.yaml, "
          f"docker/Dockerfile, deploy/haproxy, deploy/nginx, "
          f"deploy/k8s/consistent-hash, deploy/k8s/sidecar: "
          f"{len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
