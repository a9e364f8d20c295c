package archive

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DefaultRegion is the region of an S3 archive whose options and
// environment name none: AWS's first, and what S3-compatible servers
// (versitygw, MinIO) expect unless configured otherwise.
const DefaultRegion = "us-east-1"

// S3Options say how to reach an S3-compatible store. An empty field falls
// back to the environment AWS's tools read (S3OptionsFromEnv), and nothing
// else: not the SDK's whole default chain, whose shared config files,
// SSO and instance metadata (IMDS, a request to 169.254.169.254) are more
// than an archive needs and, off AWS, a timeout on every Open.
type S3Options struct {
	// Endpoint is the S3 API's URL, such as http://127.0.0.1:7070 (a
	// versitygw or MinIO); empty: AWS's own for the region.
	Endpoint string
	// Region is the bucket's (default DefaultRegion).
	Region string
	// PathStyle puts the bucket in the request's path, not its host name,
	// as most servers other than AWS want.
	PathStyle bool
	// AccessKeyID and SecretAccessKey are static credentials, with
	// SessionToken for temporary ones. Without them the requests are not
	// signed (a public bucket's reads), unless the environment has them.
	AccessKeyID, SecretAccessKey, SessionToken string
}

// S3OptionsFromEnv is the options the environment gives, as AWS's tools
// read them: AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL), AWS_REGION (or
// AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN. PathStyle has no standard variable and is false.
func S3OptionsFromEnv() S3Options {
	return S3Options{}.withEnv(os.Getenv)
}

// withEnv fills o's empty fields from getenv. The credentials are taken
// from it only as a whole, when o has none: a key ID from the options
// with a secret from the environment would sign with a pair nobody gave.
func (o S3Options) withEnv(getenv func(string) string) S3Options {
	first := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	if o.Endpoint == "" {
		o.Endpoint = first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	}
	if o.Region == "" {
		o.Region = first("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if o.AccessKeyID == "" && o.SecretAccessKey == "" && o.SessionToken == "" {
		o.AccessKeyID = getenv("AWS_ACCESS_KEY_ID")
		o.SecretAccessKey = getenv("AWS_SECRET_ACCESS_KEY")
		o.SessionToken = getenv("AWS_SESSION_TOKEN")
	}
	return o
}

// check says what is wrong with o, filled from the environment, or nil.
func (o S3Options) check() error {
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("S3 endpoint %q is not a URL such as http://127.0.0.1:7070 or https://s3.example.com (the options' Endpoint, or AWS_ENDPOINT_URL)", o.Endpoint)
		}
	}
	switch {
	case o.AccessKeyID != "" && o.SecretAccessKey == "":
		return fmt.Errorf("S3 access key ID given without its secret access key: give both (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or neither for unsigned requests")
	case o.AccessKeyID == "" && o.SecretAccessKey != "":
		return fmt.Errorf("S3 secret access key given without its access key ID: give both (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or neither for unsigned requests")
	case o.AccessKeyID == "" && o.SessionToken != "":
		return fmt.Errorf("S3 session token given without an access key ID and secret: a session token belongs to temporary credentials, give all three")
	}
	return nil
}

// s3Store is an archive in a bucket, under the location's prefix.
type s3Store struct {
	loc      Location
	endpoint string
	client   *s3.Client
}

func openS3(ctx context.Context, loc Location, opts S3Options) (*s3Store, error) {
	if loc.Bucket == "" {
		return nil, fmt.Errorf("archive location names no bucket: give s3://BUCKET[/PREFIX]")
	}
	opts = opts.withEnv(os.Getenv)
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("archive %s: %w", loc, err)
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if opts.AccessKeyID != "" {
		creds = credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)
	}
	client := s3.NewFromConfig(aws.Config{Region: opts.Region, Credentials: creds}, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
		// The SDK's default (since s3 v1.73) sends a CRC32 of every
		// upload in an aws-chunked trailer, which several S3-compatible
		// servers reject or store wrongly. Content-MD5 (Put) is checked
		// by all of them.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	s := &s3Store{loc: loc, endpoint: opts.Endpoint, client: client}
	// Reach the bucket now: a wrong endpoint, bucket or key fails here,
	// with its fix, not at the end of a run with its results in hand.
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(loc.Bucket)}); err != nil {
		if status(err) == 404 {
			return nil, fmt.Errorf("archive %s: bucket %s does not exist at %s: create it (aws s3 mb s3://%s) or fix the name", loc, loc.Bucket, s.where(), loc.Bucket)
		}
		return nil, s.fail("open bucket", "", err)
	}
	return s, nil
}

func (s *s3Store) String() string { return s.loc.String() }

// where is the endpoint, as an error names it.
func (s *s3Store) where() string {
	if s.endpoint == "" {
		return "AWS S3"
	}
	return s.endpoint
}

// object is key's name in the bucket.
func (s *s3Store) object(key string) string { return join(s.loc.Prefix, key) }

// Put writes body under key unless the key exists, in two steps:
//
//  1. Get the key: a retried upload finds most of its files and compares
//     them (bytes, not ETags: an ETag is an MD5 only for some uploads and
//     some servers).
//  2. If absent, a conditional PutObject (If-None-Match: *), which the
//     server refuses with 412 Precondition Failed when the key appeared
//     meanwhile; then compare as in 1. AWS S3 has honoured it since
//     August 2024 and answers 409 ConditionalRequestConflict to a
//     concurrent one. versitygw (v1.8.0, posix backend, measured in
//     TestS3ConditionalPut) honours it: 412 PreconditionFailed, the old
//     bytes kept, and of eight writers racing on one key exactly one
//     succeeds (it locks the object's publish with a lock file).
//
// Step 1 is what keeps the old bytes on a server that ignores
// If-None-Match (and would replace the object); there only two writers
// racing on one key could still replace each other.
func (s *s3Store) Put(ctx context.Context, key string, body []byte) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("archive %s: put: %w", s, err)
	}
	old, err := s.Get(ctx, key)
	switch {
	case err == nil:
		return s.same(key, old, body)
	case !errors.Is(err, ErrNotFound):
		return err
	}
	sum := md5.Sum(body)
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.loc.Bucket),
		Key:           aws.String(s.object(key)),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentMD5:    aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		IfNoneMatch:   aws.String("*"),
	}
	// So that a browser opened on a bucket's report.html shows it.
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		in.ContentType = aws.String(t)
	}
	_, err = s.client.PutObject(ctx, in)
	if err == nil {
		return nil
	}
	if c := status(err); c == 412 || c == 409 {
		old, gerr := s.Get(ctx, key)
		if gerr != nil {
			return fmt.Errorf("archive %s: put %s: another writer created it meanwhile, and it cannot be read to compare: %w", s, key, gerr)
		}
		return s.same(key, old, body)
	}
	return s.fail("put", key, err)
}

// same is nil when the bytes under key are body's, else the ErrExists
// error.
func (s *s3Store) same(key string, old, body []byte) error {
	if bytes.Equal(old, body) {
		return nil
	}
	return existsError(s, key)
}

func (s *s3Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("archive %s: get: %w", s, err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.object(key))})
	if err != nil {
		var nk *types.NoSuchKey
		if errors.As(err, &nk) || status(err) == 404 && !isCode(err, "NoSuchBucket") {
			return nil, fmt.Errorf("archive %s: get %s: %w", s, key, ErrNotFound)
		}
		return nil, s.fail("get", key, err)
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, s.fail("get", key, err)
	}
	return b, nil
}

// List lists the objects under the prefix, in pages. An object whose name
// ends in '/' is left out: it is a folder marker some consoles create,
// not a file.
func (s *s3Store) List(ctx context.Context, prefix string) ([]string, error) {
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("archive %s: list: prefix %w", s, err)
		}
	}
	under := s.loc.Prefix
	if prefix != "" {
		under = s.object(prefix)
	}
	if under != "" {
		under += "/"
	}
	strip := ""
	if s.loc.Prefix != "" {
		strip = s.loc.Prefix + "/"
	}
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.loc.Bucket), Prefix: aws.String(under)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("list", prefix, err)
		}
		for _, o := range page.Contents {
			name := aws.ToString(o.Key)
			if strings.HasSuffix(name, "/") || !strings.HasPrefix(name, strip) {
				continue
			}
			keys = append(keys, strings.TrimPrefix(name, strip))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// fail wraps an SDK error with the operation, the key and, for the
// failures whose fix is known, the fix.
func (s *s3Store) fail(op, key string, err error) error {
	what := op
	if key != "" {
		what += " " + key
	}
	var hint string
	var nerr net.Error
	switch {
	case isCode(err, "NoSuchBucket"):
		hint = fmt.Sprintf(": bucket %s does not exist at %s; create it or fix the location", s.loc.Bucket, s.where())
	case status(err) == 403:
		hint = ": the credentials may not do this: check the access key and secret (S3Options, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and the bucket's policy"
	case status(err) == 301 || isCode(err, "AuthorizationHeaderMalformed"):
		hint = ": the bucket is in another region: set the region (S3Options.Region or AWS_REGION)"
	case errors.As(err, &nerr):
		hint = fmt.Sprintf(": %s cannot be reached: check the endpoint (S3Options.Endpoint or AWS_ENDPOINT_URL) and that the server is up", s.where())
	}
	return fmt.Errorf("archive %s: %s: %w%s", s, what, err, hint)
}

// status is the HTTP status of an SDK error's response, or 0.
func status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// isCode says whether err is an S3 API error with that code.
func isCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}
