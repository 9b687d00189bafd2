"""PyArrow's S3 file system (the AWS C++ SDK, which PyIceberg's PyArrow
FileIO uses) against icesql's S3 API: a multipart write, ranged reads, a
Parquet round trip, a recursive listing and deletes; then PyIceberg writes,
evolves and scans a table in the bucket.
Usage: pyarrow_s3.py HOST:PORT ACCESS_KEY SECRET_KEY"""
import sys

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

endpoint, key, secret = sys.argv[1:4]
fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=key, secret_key=secret,
                       region="us-east-1", force_virtual_addressing=False)

data = bytes(range(256)) * (48 * 1024)  # 12 MiB: written in parts
with fs.open_output_stream("warehouse/py/big.bin") as f:
    f.write(data)
with fs.open_input_file("warehouse/py/big.bin") as f:
    assert f.size() == len(data), f.size()
    assert f.read_at(100, 1_000_000) == data[1_000_000:1_000_100]
    assert f.read_at(10, len(data) - 10) == data[-10:]

t = pa.table({"id": list(range(1000)), "s": [str(i) for i in range(1000)]})
pq.write_table(t, "warehouse/py/nested/t.parquet", filesystem=fs)
assert pq.read_table("warehouse/py/nested/t.parquet", filesystem=fs).equals(t)

infos = fs.get_file_info(pafs.FileSelector("warehouse/py", recursive=True))
files = sorted(i.path for i in infos if i.type == pafs.FileType.File)
assert files == ["warehouse/py/big.bin", "warehouse/py/nested/t.parquet"], files
assert fs.get_file_info("warehouse/py/nested").type == pafs.FileType.Directory

fs.delete_file("warehouse/py/big.bin")
assert fs.get_file_info("warehouse/py/big.bin").type == pafs.FileType.NotFound
try:
    pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=key, secret_key="wrong",
                      region="us-east-1").open_input_file("warehouse/py/nested/t.parquet")
    raise SystemExit("a wrong secret was admitted")
except OSError as e:
    assert "403" in str(e) or "SignatureDoesNotMatch" in str(e) or "ACCESS_DENIED" in str(e), e
print("pyarrow ok")

# PyIceberg (a SQL catalog in SQLite, the warehouse in the bucket, its
# PyArrow FileIO): create, append twice, evolve, scan with a filter.
import tempfile

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import GreaterThanOrEqual

with tempfile.TemporaryDirectory() as tmp:
    cat = SqlCatalog("s3check", **{
        "uri": f"sqlite:///{tmp}/catalog.db",
        "warehouse": "s3://warehouse/pyiceberg",
        "s3.endpoint": f"http://{endpoint}",
        "s3.access-key-id": key,
        "s3.secret-access-key": secret,
        "s3.region": "us-east-1",
        "s3.force-virtual-addressing": "false",
    })
    cat.create_namespace("lake")
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "note": ["a", "b", "c"]})
    tbl = cat.create_table("lake.t", schema=rows.schema)
    tbl.append(rows)
    tbl.append(pa.table({"id": pa.array([4], pa.int64()), "note": ["d"]}))
    with tbl.update_schema() as u:
        u.rename_column("note", "label")
    got = cat.load_table("lake.t").scan(row_filter=GreaterThanOrEqual("id", 2)).to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == [2, 3, 4], got
    assert got.column("label").to_pylist() == ["b", "c", "d"], got
    loc = cat.load_table("lake.t").metadata_location
    assert loc.startswith("s3://warehouse/pyiceberg/lake"), loc
print("pyiceberg ok")
