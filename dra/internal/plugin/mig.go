package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// InventoryProfile is a GPU instance profile as NVML reports it.
type InventoryProfile struct {
	ID           int    `json:"id"`   // nvidia-smi's profile ID
	Name         string `json:"name"` // "1g.10gb"
	MemorySlices int    `json:"memory_slices"`
	Starts       []int  `json:"starts"`
}

// InventoryInstance is a GPU instance.
type InventoryInstance struct {
	ID        int `json:"id"`
	ProfileID int `json:"profile_id"`
	Start     int `json:"start"`
	Size      int `json:"size"`
}

// inventory is `tessera agent inventory --format json`.
type inventory struct {
	Format string         `json:"format"`
	GPUs   []InventoryGPU `json:"gpus"`
}

// InventoryGPU is one GPU of the node.
type InventoryGPU struct {
	Index      int                 `json:"index"`
	Name       string              `json:"name"`
	UUID       string              `json:"uuid"`
	MigEnabled bool                `json:"mig_enabled"`
	Profiles   []InventoryProfile  `json:"profiles"`
	Instances  []InventoryInstance `json:"gpu_instances"`
}

// Instance is a MIG device made for a claim.
type Instance struct {
	GPU   int    `json:"gpu"`
	Start int    `json:"start"`
	UUID  string `json:"uuid"` // "MIG-..."
}

// Mig creates and destroys MIG instances on this node's GPUs.
type Mig interface {
	// Inventory lists the GPUs, their profiles and their GPU instances.
	Inventory(ctx context.Context) ([]InventoryGPU, error)
	// Create makes the GPU instance of profileID at start on gpu and its
	// full compute instance, or finds them made already; returns the MIG
	// device.
	Create(ctx context.Context, gpu, profileID, start int) (Instance, error)
	// Destroy removes the instance at start on gpu; nothing there is fine.
	Destroy(ctx context.Context, gpu, start int) error
}

// TesseraMig runs `tessera agent inventory` and `tessera agent mig`, the
// project's NVML layer (libnvidia-ml.so.1, or the fake library in tests).
type TesseraMig struct {
	Binary string // the tessera executable
	NVML   string // the NVML library it loads
}

func (m *TesseraMig) run(ctx context.Context, out any, args ...string) error {
	args = append(args, "--nvml", m.NVML, "--format", "json")
	cmd := exec.CommandContext(ctx, m.Binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", m.Binary, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("%s %s: not the JSON expected: %v", m.Binary, strings.Join(args, " "), err)
	}
	return nil
}

// Inventory implements Mig.
func (m *TesseraMig) Inventory(ctx context.Context) ([]InventoryGPU, error) {
	var doc inventory
	if err := m.run(ctx, &doc, "agent", "inventory"); err != nil {
		return nil, err
	}
	if doc.Format != "tessera-inventory" {
		return nil, fmt.Errorf("%s agent inventory: format %q, want tessera-inventory", m.Binary, doc.Format)
	}
	return doc.GPUs, nil
}

// Create implements Mig.
func (m *TesseraMig) Create(ctx context.Context, gpu, profileID, start int) (Instance, error) {
	var made Instance
	err := m.run(ctx, &made, "agent", "mig", "create", "--gpu", strconv.Itoa(gpu),
		"--profile-id", strconv.Itoa(profileID), "--start", strconv.Itoa(start))
	return made, err
}

// Destroy implements Mig.
func (m *TesseraMig) Destroy(ctx context.Context, gpu, start int) error {
	return m.run(ctx, nil, "agent", "mig", "destroy", "--gpu", strconv.Itoa(gpu), "--start", strconv.Itoa(start))
}
