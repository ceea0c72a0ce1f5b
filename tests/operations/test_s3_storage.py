"""Many hosts, one object store: originals in an S3-compatible server over HTTP.

The test starts moto's S3 server on 127.0.0.1; the API (runserver) and the worker
run as separate OS processes configured only through environment variables.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from documents.models import Role
from tests.conftest import REPO
from tests.factories import api_token_for
from tests.live import free_port, http, multipart

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BUCKET = "curator-originals"


@pytest.fixture
def s3_server():
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_bucket(Bucket=BUCKET)
    yield endpoint, client
    server.stop()


def test_upload_worker_publish_chat_with_originals_in_s3(
    s3_server, member, process_env
):
    endpoint, s3 = s3_server
    env = {
        **process_env,
        "STORAGE_BACKEND": "storages.backends.s3.S3Storage",
        "AWS_STORAGE_BUCKET_NAME": BUCKET,
        "AWS_S3_ENDPOINT_URL": endpoint,
        "AWS_S3_REGION_NAME": "us-east-1",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }
    editor = member(Role.EDITOR, username="s3-editor")
    reviewer = member(Role.REVIEWER, username="s3-reviewer")
    editor_token = api_token_for(editor)
    reviewer_token = api_token_for(reviewer)

    port = free_port()
    api = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "manage.py"),
            "runserver",
            f"127.0.0.1:{port}",
            "--noreload",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/api"
    try:
        for _ in range(100):
            try:
                if http("GET", f"{base}/health/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert http("GET", f"{base}/health/ready")[1]["checks"]["storage"] == "ok"

        payload, headers = multipart(
            {"knowledge_base_id": "kb-company"},
            "parking.md",
            b"# Parking\n\nVisitors park for free in garage B on weekends.\n",
        )
        status, document = http(
            "POST", f"{base}/documents", editor_token, payload, headers
        )
        assert status == 201, document
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
        assert keys == [f"originals/kb-company/{document['document_id']}.md"]

        status, task = http(
            "POST", f"{base}/documents/{document['document_id']}/submit", editor_token
        )
        assert status == 202
        worker = subprocess.run(
            [
                sys.executable,
                str(REPO / "manage.py"),
                "run_ingestion_worker",
                task["task_id"],
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert worker.returncode == 0, worker.stderr
        assert (
            http("GET", f"{base}/ingestion-tasks/{task['task_id']}", editor_token)[1][
                "status"
            ]
            == "succeeded"
        )

        status, published = http(
            "POST",
            f"{base}/documents/{document['document_id']}/publish",
            reviewer_token,
            headers={"If-Match": str(document["lock_version"] + 2)},
        )
        assert status == 200, published

        status, answer = http(
            "POST",
            f"{base}/chat",
            editor_token,
            json.dumps({"question": "Where do visitors park on weekends?"}).encode(),
            {"Content-Type": "application/json"},
        )
        assert status == 200, answer
        assert answer["refused"] is False
        assert "garage B" in answer["answer"]
        assert answer["sources"][0]["document_id"] == document["document_id"]
    finally:
        api.terminate()
        api.communicate(timeout=10)
