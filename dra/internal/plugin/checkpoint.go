package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Claim states in the checkpoint.
const (
	statePreparing = "preparing" // instances may be half made
	statePrepared  = "prepared"  // instances and CDI spec written
)

// PreparedDevice is one device of a claim on this node.
type PreparedDevice struct {
	Request   string `json:"request"`
	Pool      string `json:"pool"`
	Device    string `json:"device"`
	GPU       int    `json:"gpu"`
	ProfileID int    `json:"profile_id"`
	Start     int    `json:"start"`
	MigUUID   string `json:"mig_uuid,omitempty"`
}

// PreparedClaim is what the plugin did for one claim.
type PreparedClaim struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	State     string           `json:"state"`
	Devices   []PreparedDevice `json:"devices"`
}

// Checkpoint is the plugin's crash-safe record, by claim UID.
type Checkpoint struct {
	Version int                      `json:"version"`
	Claims  map[string]PreparedClaim `json:"claims"`
}

// loadCheckpoint reads path; a missing file is an empty checkpoint.
func loadCheckpoint(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Checkpoint{Version: 1, Claims: map[string]PreparedClaim{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("checkpoint %s: version %d, want 1", path, c.Version)
	}
	if c.Claims == nil {
		c.Claims = map[string]PreparedClaim{}
	}
	return &c, nil
}

// writeFileAtomically writes data to path through a synced temporary file
// renamed over it, then syncs the directory: after a crash the file is the
// old one or the new one, never a mix.
func writeFileAtomically(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (c *Checkpoint) save(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomically(path, append(data, '\n'))
}
