// The AWS SDK for Java v2 (as Iceberg's S3FileIO, Spark and Trino use it,
// from iceberg-aws-bundle) against icesql's S3 API: PUTs from bytes and
// from a stream (signed aws-chunked with a trailing checksum over plain
// HTTP), create-if-absent, a multipart upload, a ranged GET, a listing and
// a batch delete. Usage: java -cp iceberg-aws-bundle.jar JavaS3Check.java
// ENDPOINT ACCESS_KEY SECRET_KEY
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Collectors;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.*;

public class JavaS3Check {
  static final String B = "warehouse";

  static void check(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  public static void main(String[] args) {
    S3Client c = S3Client.builder()
        .endpointOverride(URI.create(args[0]))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(args[1], args[2])))
        .forcePathStyle(true)
        .build();
    byte[] data = new byte[300 * 1024];
    new Random(1).nextBytes(data);

    c.putObject(PutObjectRequest.builder().bucket(B).key("java/bytes").build(), RequestBody.fromBytes(data));
    c.putObject(PutObjectRequest.builder().bucket(B).key("java/stream").build(),
        RequestBody.fromInputStream(new ByteArrayInputStream(data), data.length));
    c.putObject(PutObjectRequest.builder().bucket(B).key("java/crc32c").checksumAlgorithm(ChecksumAlgorithm.CRC32_C).build(),
        RequestBody.fromBytes(data));
    try {
      c.putObject(PutObjectRequest.builder().bucket(B).key("java/bytes").ifNoneMatch("*").build(), RequestBody.fromBytes(data));
      throw new AssertionError("a create of an existing key was not refused");
    } catch (S3Exception e) {
      check(e.statusCode() == 412, "create-if-absent: status " + e.statusCode());
    }

    String id = c.createMultipartUpload(b -> b.bucket(B).key("java/multipart")).uploadId();
    byte[] first = new byte[5 << 20];
    String e1 = c.uploadPart(b -> b.bucket(B).key("java/multipart").uploadId(id).partNumber(1), RequestBody.fromBytes(first)).eTag();
    String e2 = c.uploadPart(b -> b.bucket(B).key("java/multipart").uploadId(id).partNumber(2),
        RequestBody.fromInputStream(new ByteArrayInputStream(data), data.length)).eTag();
    c.completeMultipartUpload(b -> b.bucket(B).key("java/multipart").uploadId(id).multipartUpload(m -> m.parts(
        CompletedPart.builder().partNumber(1).eTag(e1).build(), CompletedPart.builder().partNumber(2).eTag(e2).build())));
    check(c.headObject(b -> b.bucket(B).key("java/multipart")).contentLength() == first.length + data.length, "multipart size");

    for (String k : new String[] {"java/bytes", "java/stream", "java/crc32c"}) {
      byte[] got = c.getObjectAsBytes(b -> b.bucket(B).key(k).range("bytes=1000-1999")).asByteArray();
      check(Arrays.equals(got, Arrays.copyOfRange(data, 1000, 2000)), k + ": ranged GET");
    }
    String keys = c.listObjectsV2(b -> b.bucket(B).prefix("java/")).contents().stream().map(S3Object::key).collect(Collectors.joining(","));
    check(keys.equals("java/bytes,java/crc32c,java/multipart,java/stream"), "listing: " + keys);
    DeleteObjectsResponse d = c.deleteObjects(b -> b.bucket(B).delete(x -> x.objects(
        ObjectIdentifier.builder().key("java/bytes").build(), ObjectIdentifier.builder().key("java/stream").build())));
    check(d.deleted().size() == 2 && d.errors().isEmpty(), "batch delete: " + d);
    System.out.println("java ok");
  }
}
