package main

import (
	"strings"
	"testing"
)

// The operator answers page-cache drop requests only in the run's results
// ConfigMap; without one the coordinator refuses before any load, rather
// than waiting for an answer that cannot come.
func TestDropPageCacheNeedsTheResultsConfigMap(t *testing.T) {
	_, err := configMapDropper(coordinatorFlags{dropPageCache: true})
	if err == nil || !strings.Contains(err.Error(), "--drop-page-cache needs --results-configmap") {
		t.Errorf("configMapDropper without --results-configmap: %v", err)
	}
}
