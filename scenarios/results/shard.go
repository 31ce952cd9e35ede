package results

import (
	"time"
)

// ShardOrigin says where a merged result came from: the shards of one run.
type ShardOrigin struct {
	RunID  string `json:"run_id"`
	Shards int    `json:"shards"`
	// Hosts are the machines the shards ran on, each once, in shard order.
	Hosts []string `json:"hosts,omitempty"`
	// StartAt is the agreed first release, nil when there was none.
	StartAt *time.Time `json:"start_at,omitempty"`
}
