package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func init() { rootCmd.AddCommand(newArchiveCmd()) }

// archiveFlags are how a command reaches an archive: its location and, for
// an S3 bucket, the endpoint, region and addressing. Credentials come from
// the environment, as for every S3 client (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
type archiveFlags struct {
	to, endpoint, region string
	pathStyle            bool
}

// add adds the flags: the location as name, the others with prefix
// ("archive-" on run and suite, where a bare --endpoint would be
// ambiguous).
func (a *archiveFlags) add(cmd *cobra.Command, name, prefix, usage string) {
	fl := cmd.Flags()
	fl.StringVar(&a.to, name, "", usage)
	fl.StringVar(&a.endpoint, prefix+"endpoint", "", "the S3 API's URL for an s3:// archive (default $AWS_ENDPOINT_URL, else AWS's)")
	fl.StringVar(&a.region, prefix+"region", "", "the bucket's region (default $AWS_REGION, else us-east-1)")
	fl.BoolVar(&a.pathStyle, prefix+"path-style", false, "address the bucket in the URL's path, as most S3 servers other than AWS want")
}

// open opens the archive the flags name.
func (a *archiveFlags) open(ctx context.Context) (archive.Store, error) {
	loc, err := archive.ParseLocation(a.to)
	if err != nil {
		return nil, err
	}
	return archive.Open(ctx, loc, a.options())
}

// options are the S3 options the flags and the environment give.
func (a *archiveFlags) options() archive.S3Options {
	o := archive.S3OptionsFromEnv()
	if a.endpoint != "" {
		o.Endpoint = a.endpoint
	}
	if a.region != "" {
		o.Region = a.region
	}
	o.PathStyle = o.PathStyle || a.pathStyle
	return o
}

// archiveDir copies a local run's (or suite's) results directory into the
// archive the flags name, at runs/local/<name>/<start>, and says where.
func (a *archiveFlags) archiveDir(ctx context.Context, name string, start time.Time, dir string) (string, int, error) {
	s, err := a.open(ctx)
	if err != nil {
		return "", 0, err
	}
	p := archive.RunPath(archive.LocalNamespace, name, start)
	n, err := archive.UploadDir(ctx, s, p, dir)
	if err != nil {
		return "", n, fmt.Errorf("archiving %s to %s: %w (the results stay in %s)", dir, s, err, dir)
	}
	return s.String() + "/" + p, n, nil
}

func newArchiveCmd() *cobra.Command {
	var a archiveFlags
	var runPath string
	var fromConfigMap bool
	cmd := &cobra.Command{
		Use:   "archive <results dir> --to <s3://bucket/prefix | dir>",
		Short: "Copy a run's results into an archive (an S3-compatible bucket or a directory), never overwriting",
		Long: `archive copies a run's results directory (as run --local or report writes
it: summary.json, omb-result.json, the histogram logs, report.html, each
repeat's directory) into an archive at runs/<namespace>/<run>/<start>/
(docs/archive.md), where streambench history finds it. Local runs use the
namespace "local"; --path names another place.

Nothing is overwritten: a file already there with the same bytes is left
(an upload tried again), one with other bytes fails the command.

--from-configmap reads a results ConfigMap mounted as a volume (its keys as
files) instead, as the operator's archiver Job does, and writes each
directory's report.html beside it.

An s3:// archive's credentials come from AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.`,
		Example: `  streambench archive results/my-run --to s3://bench/nightly --endpoint http://127.0.0.1:7070 --path-style
  streambench archive results/my-run --to /srv/streambench-archive
  streambench history /srv/streambench-archive`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.to == "" {
				return fmt.Errorf("--to is required: the archive, s3://bucket/prefix or a directory")
			}
			ctx := cmd.Context()
			name, start, err := runOf(args[0], fromConfigMap)
			if err != nil {
				return err
			}
			if runPath == "" {
				runPath = archive.RunPath(archive.LocalNamespace, name, start)
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			var n int
			if fromConfigMap {
				files, err := configMapFiles(args[0])
				if err != nil {
					return err
				}
				n, err = len(files), archive.Upload(ctx, s, runPath, files)
			} else {
				n, err = archive.UploadDir(ctx, s, runPath, args[0])
			}
			if err != nil {
				return fmt.Errorf("archiving %s to %s: %w", args[0], s, err)
			}
			msg := fmt.Sprintf("archived %d files to %s/%s", n, s, runPath)
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			// The operator reads an archiver pod's outcome from its
			// termination message, success as failure.
			if p := os.Getenv(protocol.TerminationLogEnv); p != "" {
				if err := os.WriteFile(p, []byte(msg), 0o644); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "streambench: writing the termination message to %s: %v\n", p, err)
				}
			}
			return nil
		},
	}
	a.add(cmd, "to", "", "the archive: s3://bucket/prefix or a directory")
	cmd.Flags().StringVar(&runPath, "path", "", "where in the archive (default runs/local/<run>/<start>, from summary.json)")
	cmd.Flags().BoolVar(&fromConfigMap, "from-configmap", false, "the directory is a results ConfigMap mounted as a volume (its keys as files)")
	return cmd
}

// configMapFiles are the files of a results ConfigMap mounted at dir
// (its keys as files), laid out as report.ConfigMapFiles lays them.
func configMapFiles(dir string) (map[string][]byte, error) {
	data, binary := map[string]string{}, map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		// A ConfigMap volume's own entries (..data, the timestamped
		// directory) start with "..": its keys are the rest.
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(e.Name(), ".json") {
			data[e.Name()] = string(b)
		} else {
			binary[e.Name()] = b
		}
	}
	files, err := report.ConfigMapFiles(data, binary, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return files, nil
}

// runOf is the run's name and start from dir's summary.json (a mounted
// ConfigMap's key of that name alike); the name falls back to the
// directory's, as report.Load does.
func runOf(dir string, fromConfigMap bool) (string, time.Time, error) {
	raw, err := os.ReadFile(filepath.Join(dir, results.KeySummary))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s has no %s: give a run's results directory (results/<run>): %w", dir, results.KeySummary, err)
	}
	var s struct {
		Run   string    `json:"run"`
		Start time.Time `json:"start"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", filepath.Join(dir, results.KeySummary), err)
	}
	if s.Run == "" && !fromConfigMap {
		s.Run = filepath.Base(filepath.Clean(dir))
	}
	return s.Run, s.Start, nil
}
