package stats

import "sync"

// Store keeps a worker's snapshots until the coordinator confirms it has
// them. OMB's period-stats endpoint reads and resets, so a response lost in
// transit (or a retried request) loses that interval (OMB issue #369).
// Here the coordinator asks for every snapshot after the last Seq it holds
// (After), and only then releases them (Ack): a retry returns the same
// snapshots again, never fewer. Safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	last  uint64     // Seq of the newest snapshot appended
	acked uint64     // every Seq <= acked was released
	snaps []Snapshot // Seq ascending, all > acked
}

// NewStore returns an empty store; the first snapshot gets Seq 1.
func NewStore() *Store { return &Store{} }

// Append numbers snap with the next Seq, keeps it, and returns the Seq.
func (s *Store) Append(snap Snapshot) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	snap.Seq = s.last
	s.snaps = append(s.snaps, snap)
	return s.last
}

// After returns every kept snapshot with Seq > seq, oldest first. The
// snapshots share histograms with the store: marshal them, do not modify.
func (s *Store) After(seq uint64) []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.snaps) && s.snaps[i].Seq <= seq {
		i++
	}
	out := make([]Snapshot, len(s.snaps)-i)
	copy(out, s.snaps[i:])
	return out
}

// Ack releases every snapshot with Seq <= seq: the coordinator has them.
// Acking an old or unknown Seq again is harmless.
func (s *Store) Ack(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq > s.last {
		seq = s.last
	}
	if seq <= s.acked {
		return
	}
	i := 0
	for i < len(s.snaps) && s.snaps[i].Seq <= seq {
		i++
	}
	s.snaps = append([]Snapshot(nil), s.snaps[i:]...)
	s.acked = seq
}

// LastSeq is the Seq of the newest snapshot appended (0 if none).
func (s *Store) LastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// AckedSeq is the highest Seq released by Ack.
func (s *Store) AckedSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked
}

// Len is the number of snapshots kept.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.snaps)
}
