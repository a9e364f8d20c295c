package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streambench/streambench-operator/internal/archive/archivetest"
)

// TestS3ConditionalPut measures what the server does with a conditional
// PutObject (If-None-Match: *), without the Store's own check before it:
// s3Store.Put's comment cites this. versitygw v1.8.0 answers 412 and
// keeps the old bytes, also to writers racing on one key.
func TestS3ConditionalPut(t *testing.T) {
	endpoint, _, _, bucket := archivetest.Start(t)
	c := archivetest.NewClient(endpoint)
	ctx := context.Background()
	put := func(key, body string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(body)), IfNoneMatch: aws.String("*")})
		return err
	}
	get := func(key string) string {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = out.Body.Close() }()
		b, err := io.ReadAll(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := put("k", "one"); err != nil {
		t.Fatal(err)
	}
	err := put("k", "two")
	if status(err) != 412 || !isCode(err, "PreconditionFailed") {
		t.Errorf("second conditional put = %v (status %d), want 412 PreconditionFailed", err, status(err))
	}
	if got := get("k"); got != "one" {
		t.Errorf("after the refused put the object is %q, want the old bytes", got)
	}

	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = put("race", fmt.Sprintf("writer %d", i)) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("conditional puts of writers %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case status(err) != 412 && status(err) != 409:
			t.Errorf("writer %d: %v, want 412 (or 409)", i, err)
		}
	}
	if winner >= 0 && get("race") != fmt.Sprintf("writer %d", winner) {
		t.Errorf("the object is %q, not the winner's (writer %d)", get("race"), winner)
	}
}

func TestS3OptionsWithEnv(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://generic:7070",
		"AWS_REGION":            "eu-west-1",
		"AWS_DEFAULT_REGION":    "us-west-2",
		"AWS_ACCESS_KEY_ID":     "envAK",
		"AWS_SECRET_ACCESS_KEY": "envSK",
		"AWS_SESSION_TOKEN":     "envST",
	}
	with := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return env[k]
		}
	}
	for _, tt := range []struct {
		name string
		opts S3Options
		env  map[string]string
		want S3Options
	}{
		{"all from env", S3Options{}, nil,
			S3Options{Endpoint: "http://generic:7070", Region: "eu-west-1", AccessKeyID: "envAK", SecretAccessKey: "envSK", SessionToken: "envST"}},
		{"the S3 endpoint before the generic one", S3Options{}, map[string]string{"AWS_ENDPOINT_URL_S3": "http://s3only:9000"},
			S3Options{Endpoint: "http://s3only:9000", Region: "eu-west-1", AccessKeyID: "envAK", SecretAccessKey: "envSK", SessionToken: "envST"}},
		{"AWS_DEFAULT_REGION when AWS_REGION is unset", S3Options{}, map[string]string{"AWS_REGION": ""},
			S3Options{Endpoint: "http://generic:7070", Region: "us-west-2", AccessKeyID: "envAK", SecretAccessKey: "envSK", SessionToken: "envST"}},
		{"given fields win", S3Options{Endpoint: "http://given:1", Region: "r", PathStyle: true, AccessKeyID: "AK", SecretAccessKey: "SK"}, nil,
			S3Options{Endpoint: "http://given:1", Region: "r", PathStyle: true, AccessKeyID: "AK", SecretAccessKey: "SK"}},
		// A key ID alone is not completed with the environment's secret
		// (check then names what is missing).
		{"credentials as a whole", S3Options{AccessKeyID: "AK"}, nil,
			S3Options{Endpoint: "http://generic:7070", Region: "eu-west-1", AccessKeyID: "AK"}},
		{"empty env", S3Options{}, map[string]string{"AWS_ENDPOINT_URL": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""},
			S3Options{}},
	} {
		if got := tt.opts.withEnv(with(tt.env)); got != tt.want {
			t.Errorf("%s: withEnv = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestS3OptionsCheck(t *testing.T) {
	for _, tt := range []struct {
		opts    S3Options
		wantErr string
	}{
		{S3Options{}, ""},
		{S3Options{Endpoint: "http://127.0.0.1:7070", AccessKeyID: "a", SecretAccessKey: "s"}, ""},
		{S3Options{Endpoint: "https://s3.example.com/", AccessKeyID: "a", SecretAccessKey: "s", SessionToken: "t"}, ""},
		{S3Options{Endpoint: "127.0.0.1:7070"}, `S3 endpoint "127.0.0.1:7070" is not a URL such as http://127.0.0.1:7070`},
		{S3Options{Endpoint: "ftp://host"}, "is not a URL"},
		{S3Options{AccessKeyID: "a"}, "S3 access key ID given without its secret access key"},
		{S3Options{SecretAccessKey: "s"}, "S3 secret access key given without its access key ID"},
		{S3Options{SessionToken: "t"}, "S3 session token given without an access key ID and secret"},
	} {
		err := tt.opts.check()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v.check() = %v, want %q", tt.opts, err, tt.wantErr)
		}
	}
}

// TestOpenS3Errors: what Open says when the bucket, the credentials or
// the endpoint are wrong.
func TestOpenS3Errors(t *testing.T) {
	endpoint, ak, sk, bucket := archivetest.Start(t)
	ctx := context.Background()
	good := S3Options{Endpoint: endpoint, PathStyle: true, AccessKeyID: ak, SecretAccessKey: sk}
	for _, tt := range []struct {
		name    string
		bucket  string
		opts    func(o S3Options) S3Options
		wantErr string
	}{
		{"no such bucket", "no-such-bucket", func(o S3Options) S3Options { return o },
			"archive s3://no-such-bucket/p: bucket no-such-bucket does not exist at " + endpoint + ": create it (aws s3 mb s3://no-such-bucket) or fix the name"},
		{"wrong secret", bucket, func(o S3Options) S3Options { o.SecretAccessKey = "wrong"; return o },
			"the credentials may not do this: check the access key and secret"},
		{"no credentials", bucket, func(o S3Options) S3Options { o.AccessKeyID, o.SecretAccessKey = "", ""; return o },
			"the credentials may not do this"},
		{"nobody listening", bucket, func(o S3Options) S3Options { o.Endpoint = "http://127.0.0.1:1"; return o },
			"http://127.0.0.1:1 cannot be reached: check the endpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// No fallback to this machine's AWS_* variables.
			for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
				t.Setenv(v, "")
			}
			_, err := Open(ctx, Location{Kind: KindS3, Bucket: tt.bucket, Prefix: "p"}, tt.opts(good))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Open = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestS3EnvFallback: with no options, Open reads the endpoint and the
// credentials from AWS's variables.
func TestS3EnvFallback(t *testing.T) {
	endpoint, ak, sk, bucket := archivetest.Start(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", ak)
	t.Setenv("AWS_SECRET_ACCESS_KEY", sk)
	t.Setenv("AWS_SESSION_TOKEN", "")
	ctx := context.Background()
	s, err := Open(ctx, Location{Kind: KindS3, Bucket: bucket}, S3Options{PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "env/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if o := S3OptionsFromEnv(); o.Endpoint != endpoint || o.AccessKeyID != ak || o.SecretAccessKey != sk {
		t.Errorf("S3OptionsFromEnv = %+v", o)
	}
}
