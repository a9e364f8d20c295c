package localcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Record is what up writes about the cluster it brings up, so that down,
// status and the image loads act on the same nodes without being told
// again.
type Record struct {
	Nodes int `json:"nodes"`
}

func recordPath(state string) string { return filepath.Join(state, "cluster.json") }

// LoadRecord reads the record of the last up in state.
func LoadRecord(state string) (Record, error) {
	var r Record
	b, err := os.ReadFile(recordPath(state))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", recordPath(state), err)
	}
	return r, nil
}

func (c *Cluster) saveRecord() error {
	b, err := json.Marshal(Record{Nodes: len(c.Nodes)})
	if err != nil {
		return err
	}
	return writeFile(recordPath(c.State), string(b)+"\n")
}
