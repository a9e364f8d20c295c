package archive

import (
	"strings"
	"testing"
)

func TestParseLocation(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Location
		wantErr string
	}{
		{in: "s3://results", want: Location{Kind: KindS3, Bucket: "results"}},
		{in: "s3://results/", want: Location{Kind: KindS3, Bucket: "results"}},
		{in: "s3://results/team-a/nightly", want: Location{Kind: KindS3, Bucket: "results", Prefix: "team-a/nightly"}},
		{in: "s3://results/team-a/", want: Location{Kind: KindS3, Bucket: "results", Prefix: "team-a"}},
		{in: "S3://results/x", want: Location{Kind: KindS3, Bucket: "results", Prefix: "x"}},
		// Literal, as `aws s3` takes it: no percent-decoding.
		{in: "s3://results/a%20b", want: Location{Kind: KindS3, Bucket: "results", Prefix: "a%20b"}},
		{in: "file:///var/lib/streambench", want: Location{Kind: KindDir, Dir: "/var/lib/streambench"}},
		{in: "file:///var/lib/streambench/", want: Location{Kind: KindDir, Dir: "/var/lib/streambench"}},
		{in: "/var/lib/streambench", want: Location{Kind: KindDir, Dir: "/var/lib/streambench"}},
		{in: "results", want: Location{Kind: KindDir, Dir: "results"}},
		{in: "./results/../archive", want: Location{Kind: KindDir, Dir: "archive"}},
		// Not a scheme before "://": a path.
		{in: "./a://b", want: Location{Kind: KindDir, Dir: "a:/b"}},

		{in: "", wantErr: "archive location is empty: give s3://BUCKET[/PREFIX], file:///ABSOLUTE/PATH or a directory's path"},
		{in: "s3://", wantErr: `archive location "s3://" names no bucket: write s3://BUCKET[/PREFIX]`},
		{in: "s3:///prefix", wantErr: "names no bucket"},
		{in: "s3://Results", wantErr: `bucket "Results" is not a valid bucket name (3-63 lower-case letters`},
		{in: "s3://ab", wantErr: "is not a valid bucket name"},
		{in: "s3://bucket_1", wantErr: "is not a valid bucket name"},
		{in: "s3://results//x", wantErr: `archive location "s3://results//x": prefix key "/x" starts with '/'`},
		{in: "s3://results/a/../b", wantErr: `prefix key "a/../b" has a ".." segment`},
		{in: "file://host/path", wantErr: "a file URL needs an absolute path and no host: write file:///PATH (three slashes)"},
		{in: "file://relative", wantErr: "a file URL needs an absolute path"},
		{in: "gs://bucket", wantErr: `archive location "gs://bucket": scheme "gs" is not supported: give s3://BUCKET[/PREFIX], file:///ABSOLUTE/PATH or a directory's path`},
		{in: "https://s3.example.com/bucket", wantErr: `scheme "https" is not supported`},
	} {
		got, err := ParseLocation(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseLocation(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLocation(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseLocation(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		// String gives a URL (or a relative path) that reads back the same.
		back, err := ParseLocation(got.String())
		if err != nil || back != got {
			t.Errorf("ParseLocation(%q).String() = %q, which reads back as %+v, %v", tt.in, got.String(), back, err)
		}
	}
}

func TestLocationString(t *testing.T) {
	for _, tt := range []struct {
		loc  Location
		want string
	}{
		{Location{Kind: KindS3, Bucket: "results"}, "s3://results"},
		{Location{Kind: KindS3, Bucket: "results", Prefix: "a/b"}, "s3://results/a/b"},
		{Location{Kind: KindDir, Dir: "/var/lib/x"}, "file:///var/lib/x"},
		{Location{Kind: KindDir, Dir: "results"}, "results"},
	} {
		if got := tt.loc.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.loc, got, tt.want)
		}
	}
}

func TestLocationJoin(t *testing.T) {
	run := "runs/ns/r/20261201T020000Z"
	for _, tt := range []struct {
		loc  Location
		path string
		want string
	}{
		{Location{Kind: KindS3, Bucket: "results"}, run, "s3://results/" + run},
		{Location{Kind: KindS3, Bucket: "results", Prefix: "team"}, run, "s3://results/team/" + run},
		{Location{Kind: KindS3, Bucket: "results", Prefix: "team"}, "", "s3://results/team"},
		{Location{Kind: KindDir, Dir: "/srv/archive"}, run, "file:///srv/archive/" + run},
		{Location{Kind: KindDir, Dir: "archive"}, run + "/", "archive/" + run},
	} {
		if got := tt.loc.Join(tt.path).String(); got != tt.want {
			t.Errorf("%s.Join(%q) = %q, want %q", tt.loc, tt.path, got, tt.want)
		}
	}
}

func TestObjectURL(t *testing.T) {
	team := Location{Kind: KindS3, Bucket: "results", Prefix: "team-a/nightly"}
	for _, tt := range []struct {
		name    string
		loc     Location
		o       S3Options
		key     string
		want    string
		wantErr string
	}{
		{"a path-style server", team, S3Options{Endpoint: "http://minio.storage.svc:9000", PathStyle: true}, "runs/ns/r/20261203T020000Z/report.html",
			"http://minio.storage.svc:9000/results/team-a/nightly/runs/ns/r/20261203T020000Z/report.html", ""},
		{"an endpoint with a path of its own", team, S3Options{Endpoint: "https://gw.example.com/s3/", PathStyle: true}, "a/b",
			"https://gw.example.com/s3/results/team-a/nightly/a/b", ""},
		{"virtual-hosted", team, S3Options{Endpoint: "https://storage.example.com"}, "a/b",
			"https://results.storage.example.com/team-a/nightly/a/b", ""},
		{"AWS, its region", team, S3Options{Region: "eu-west-1"}, "a/b", "https://results.s3.eu-west-1.amazonaws.com/team-a/nightly/a/b", ""},
		{"AWS, no region", Location{Kind: KindS3, Bucket: "results"}, S3Options{}, "a/b", "https://results.s3.us-east-1.amazonaws.com/a/b", ""},
		{"AWS, path-style", Location{Kind: KindS3, Bucket: "results"}, S3Options{PathStyle: true}, "a", "https://s3.us-east-1.amazonaws.com/results/a", ""},
		{"a space escaped", team, S3Options{Endpoint: "http://h:9000", PathStyle: true}, "a b/c", "http://h:9000/results/team-a/nightly/a%20b/c", ""},
		{"a directory", Location{Kind: KindDir, Dir: "results"}, S3Options{}, "a", "", "results is not an S3 location"},
		{"an endpoint that is no URL", team, S3Options{Endpoint: "minio:9000"}, "a", "", `the S3 endpoint "minio:9000" is not a URL (as http://host:port)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ObjectURL(tt.loc, tt.o, tt.key)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("%q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
