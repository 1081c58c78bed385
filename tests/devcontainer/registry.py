"""A private registry on loopback for OCI features: ``docker-registry`` over TLS (the reference CLI
speaks only HTTPS) with a CA made for the test, or over plain HTTP; started per test module and
stopped by PID. ``publish_feature`` pushes a feature folder the way the reference's publisher lays it out.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import socket
import ssl
import subprocess
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

START_SECONDS = 20.0


@dataclass(frozen=True)
class Registry:
    address: str  # 127.0.0.1:PORT
    scheme: str  # https or http
    ca_file: str | None  # the CA that signed its certificate (https)

    def client(self) -> httpx.Client:
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else False
        return httpx.Client(base_url=f"{self.scheme}://{self.address}", verify=verify, timeout=30)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _certificates(folder: Path) -> tuple[str, str, str]:
    """A CA, and a certificate for 127.0.0.1 signed by it: (ca, cert, key) paths."""
    ca_key, ca, key, csr, cert = (str(folder / name) for name in ("ca.key", "ca.pem", "key.pem", "req.csr", "cert.pem"))
    extensions = folder / "san.cnf"
    extensions.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    quiet = {"check": True, "capture_output": True, "timeout": 60}
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
                    "-days", "2", "-subj", "/CN=rig test CA"], **quiet)  # type: ignore[call-overload]  # fmt: skip
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                    "-subj", "/CN=127.0.0.1"], **quiet)  # type: ignore[call-overload]  # fmt: skip
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                    "-out", cert, "-days", "2", "-extfile", str(extensions)], **quiet)  # type: ignore[call-overload]  # fmt: skip
    return ca, cert, key


def run_registry(folder: Path, *, tls: bool) -> Iterator[Registry]:
    """``docker-registry`` on 127.0.0.1 (TLS or not); yields once it answers, stops it by PID after."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise FileNotFoundError("docker-registry is not installed (Debian's docker-registry package)")
    folder.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    config: dict[str, object] = {
        "version": 0.1,
        "storage": {"filesystem": {"rootdirectory": str(folder / "data")}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}"},
        "log": {"level": "error"},
    }
    ca = None
    if tls:
        ca, cert, key = _certificates(folder)
        config["http"] = {"addr": f"127.0.0.1:{port}", "tls": {"certificate": cert, "key": key}}
    (folder / "config.yml").write_text(json.dumps(config))  # YAML reads JSON
    log = (folder / "registry.log").open("w")
    process = subprocess.Popen([binary, "serve", str(folder / "config.yml")], stdout=log, stderr=subprocess.STDOUT)
    registry = Registry(f"127.0.0.1:{port}", "https" if tls else "http", ca)
    try:
        deadline = time.monotonic() + START_SECONDS
        with registry.client() as client:
            while True:
                try:
                    if client.get("/v2/").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"docker-registry did not start: {(folder / 'registry.log').read_text()[-2000:]}"
                    )
                time.sleep(0.05)
        yield registry
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def publish_feature(registry: Registry, repository: str, tag: str, folder: Path) -> str:
    """Push ``folder`` (devcontainer-feature.json, install.sh, ...) as a feature; its manifest digest."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=f"./{path.relative_to(folder)}", recursive=False)
    layer, config = buffer.getvalue(), b"{}"
    with registry.client() as client:
        for blob in (layer, config):
            started = client.post(f"/v2/{repository}/blobs/uploads/")
            assert started.status_code == 202, started.text
            location = started.headers["location"]
            joiner = "&" if "?" in location else "?"
            pushed = client.put(f"{location}{joiner}digest=sha256:{hashlib.sha256(blob).hexdigest()}", content=blob)
            assert pushed.status_code == 201, pushed.text
        metadata = (folder / "devcontainer-feature.json").read_text()
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.devcontainers",
                "digest": f"sha256:{hashlib.sha256(config).hexdigest()}",
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.devcontainers.layer.v1+tar",
                    "digest": f"sha256:{hashlib.sha256(layer).hexdigest()}",
                    "size": len(layer),
                    "annotations": {"org.opencontainers.image.title": f"devcontainer-feature-{folder.name}.tgz"},
                }
            ],
            "annotations": {"dev.containers.metadata": metadata},
        }
        body = json.dumps(manifest).encode()
        done = client.put(
            f"/v2/{repository}/manifests/{tag}", content=body, headers={"Content-Type": manifest["mediaType"]}
        )
        assert done.status_code == 201, done.text
        return str(done.headers.get("docker-content-digest"))


__all__ = ["Registry", "publish_feature", "run_registry"]
