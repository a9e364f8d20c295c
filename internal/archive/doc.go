// Package archive keeps the result files of finished runs beyond the run
// (issue 61): in a bucket of an S3-compatible object store or in a
// directory, both behind one Store. A run's files are written once and
// never replaced, so an archive is a history that whoever can write to it
// cannot rewrite by accident: a Put of a key that exists succeeds only when
// the bytes are the same (a retried upload), and fails with ErrExists
// otherwise.
//
// The layout is stable; readers (streambench history, fetch) find runs by
// it:
//
//	<location's prefix or directory>/
//	  runs/<namespace>/<run>/<start>/   one run (RunPath): start is the
//	                                    run's start, UTC, 20060102T150405Z;
//	                                    a local run's namespace is "local"
//	    summary.json, omb-result.json, ... the run's result files, with
//	                                    their own relative names
//
// Keys are '/'-separated and relative to the location (ValidateKey). The
// same keys are valid in both kinds of store, so an archive can be copied
// from one to the other (Fetch, then UploadDir).
package archive
