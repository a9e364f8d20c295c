package v1alpha1

// ResultsSpec says where a run's results are kept beyond its results
// ConfigMap, which goes with the run (docs/archive.md).
type ResultsSpec struct {
	// Archive copies every result file of the finished run (summary.json,
	// omb-result.json, the histogram logs, each repeat's, status.faults
	// and the report) to an S3-compatible bucket, under
	// runs/<namespace>/<run>/<start>/. Without it, the operator's default
	// archive (the chart's archive values), if it has one.
	// +optional
	Archive *ArchiveSpec `json:"archive,omitempty"`
}

// ArchiveSpec is an S3-compatible bucket and how to reach it.
type ArchiveSpec struct {
	// URL is the bucket and an optional prefix: s3://bucket/prefix.
	// +kubebuilder:validation:Pattern=`^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$`
	URL string `json:"url"`
	// Endpoint is the S3 API's URL (e.g. http://minio.storage:9000);
	// empty: AWS's own for the region.
	// +kubebuilder:validation:Pattern=`^https?://[^/]+/?$`
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the bucket's (default us-east-1).
	// +optional
	Region string `json:"region,omitempty"`
	// PathStyle puts the bucket in the URL's path, not its host name, as
	// most servers other than AWS want.
	// +optional
	PathStyle bool `json:"pathStyle,omitempty"`
	// CredentialsSecret names a Secret in the run's namespace with the
	// keys accessKeyID and secretAccessKey (and, optionally,
	// sessionToken). The operator reads it only for a run whose creator
	// may read it (docs/security.md).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// ArchiveStatus is where a run's results were archived, or why not.
type ArchiveStatus struct {
	// URL is the run's own place in the archive:
	// s3://bucket/prefix/runs/<namespace>/<run>/<start>.
	URL string `json:"url"`
	// Files is how many files were written there.
	// +optional
	Files int32 `json:"files,omitempty"`
	// Attempts is how many uploads were tried; the operator stops after
	// ArchiveAttempts and the results stay in the ConfigMap.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
}

// ArchiveAttempts is how many times the operator tries to archive a
// finished run's results before it gives up (condition Archived False).
const ArchiveAttempts = 5

// Keys of spec.results.archive.credentialsSecret.
const (
	ArchiveAccessKeyID     = "accessKeyID"
	ArchiveSecretAccessKey = "secretAccessKey"
	ArchiveSessionToken    = "sessionToken"
)
