package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"

	"tessera.local/dra/internal/slices"
)

const node = "node-0"

// fakeMig is an A100-80GB machine in memory: GPU instances by (GPU, start),
// overlaps refused as NVML refuses them.
type fakeMig struct {
	mu        sync.Mutex
	gpus      int
	instances map[[2]int]int // (gpu, start) -> profile ID
	creates   int
	failAt    int // the failAt-th Create fails (0: never)
}

var a100Profiles = []InventoryProfile{
	{ID: 19, Name: "1g.10gb", MemorySlices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6}},
	{ID: 15, Name: "1g.20gb", MemorySlices: 2, Starts: []int{0, 2, 4, 6}},
	{ID: 14, Name: "2g.20gb", MemorySlices: 2, Starts: []int{0, 2, 4}},
	{ID: 9, Name: "3g.40gb", MemorySlices: 4, Starts: []int{0, 4}},
	{ID: 5, Name: "4g.40gb", MemorySlices: 4, Starts: []int{0}},
	{ID: 0, Name: "7g.80gb", MemorySlices: 8, Starts: []int{0}},
}

func sizeOf(profileID int) int {
	for _, p := range a100Profiles {
		if p.ID == profileID {
			return p.MemorySlices
		}
	}
	return 0
}

func (m *fakeMig) Inventory(context.Context) ([]InventoryGPU, error) {
	var out []InventoryGPU
	for i := 0; i < m.gpus; i++ {
		out = append(out, InventoryGPU{Index: i, Name: "NVIDIA A100-SXM4-80GB", UUID: fmt.Sprintf("GPU-%d", i), MigEnabled: true, Profiles: a100Profiles})
	}
	return out, nil
}

func (m *fakeMig) Create(_ context.Context, gpu, profileID, start int) (Instance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creates++
	if m.creates == m.failAt {
		return Instance{}, errors.New("injected failure")
	}
	uuid := fmt.Sprintf("MIG-%d-%d", gpu, start)
	if held, ok := m.instances[[2]int{gpu, start}]; ok {
		if held != profileID {
			return Instance{}, fmt.Errorf("start %d holds profile %d", start, held)
		}
		return Instance{GPU: gpu, Start: start, UUID: uuid}, nil
	}
	for at, id := range m.instances {
		if at[0] == gpu && at[1] < start+sizeOf(profileID) && start < at[1]+sizeOf(id) {
			return Instance{}, fmt.Errorf("insufficient resources: overlaps start %d", at[1])
		}
	}
	m.instances[[2]int{gpu, start}] = profileID
	return Instance{GPU: gpu, Start: start, UUID: uuid}, nil
}

func (m *fakeMig) Destroy(_ context.Context, gpu, start int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.instances, [2]int{gpu, start})
	return nil
}

func (m *fakeMig) held() map[[2]int]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[[2]int]int{}
	for k, v := range m.instances {
		out[k] = v
	}
	return out
}

// claim is an allocated claim of `devices` on pool `pool`.
func claim(name, uid, pool string, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)}}
	var results []resourceapi.DeviceRequestAllocationResult
	for i, d := range devices {
		results = append(results, resourceapi.DeviceRequestAllocationResult{
			Request: fmt.Sprintf("mig-%d", i), Driver: slices.DriverName, Pool: pool, Device: d,
		})
	}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	return c
}

// node plugin started through kubeletplugin, reached through its gRPC socket.
type harness struct {
	t        *testing.T
	state    string
	cdi      string
	mig      Mig
	kube     *fake.Clientset
	helper   *kubeletplugin.Helper
	client   drapb.DRAPluginClient
	conn     *grpc.ClientConn
	cancel   context.CancelFunc
	annotate []slices.GPU
}

func newHarness(t *testing.T, mig Mig, claims ...*resourceapi.ResourceClaim) *harness {
	t.Helper()
	h := &harness{t: t, state: t.TempDir(), cdi: t.TempDir(), mig: mig, kube: fake.NewClientset()}
	for _, c := range claims {
		h.add(c)
	}
	h.start()
	return h
}

func (h *harness) add(c *resourceapi.ResourceClaim) {
	if _, err := h.kube.ResourceV1().ResourceClaims(c.Namespace).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// start runs the plugin (again, after stop: a restarted process).
func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	driver, gpus, err := NewDriver(ctx, node, h.mig, h.state, h.cdi)
	if err != nil {
		h.t.Fatal(err)
	}
	h.annotate = gpus
	registrar := h.t.TempDir()
	helper, err := kubeletplugin.Start(ctx, driver,
		kubeletplugin.DriverName(slices.DriverName), kubeletplugin.NodeName(node),
		kubeletplugin.KubeClient(h.kube), kubeletplugin.PluginDataDirectoryPath(h.state),
		kubeletplugin.RegistrarDirectoryPath(registrar))
	if err != nil {
		h.t.Fatal(err)
	}
	conn, err := grpc.NewClient("unix://"+filepath.Join(h.state, "dra.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.helper, h.conn, h.cancel, h.client = helper, conn, cancel, drapb.NewDRAPluginClient(conn)
	h.t.Cleanup(h.stop)
}

func (h *harness) stop() {
	if h.helper == nil {
		return
	}
	_ = h.conn.Close()
	h.helper.Stop()
	h.cancel()
	h.helper = nil
}

// prepared lists the claims in the plugin's checkpoint.
func (h *harness) prepared() ([]string, error) {
	return (&Driver{checkpoint: filepath.Join(h.state, "checkpoint.json")}).Prepared()
}

// grpcClaims names claims as the kubelet does in its calls.
func grpcClaims(claims []*resourceapi.ResourceClaim) []*drapb.Claim {
	var out []*drapb.Claim
	for _, c := range claims {
		out = append(out, &drapb.Claim{Namespace: c.Namespace, Name: c.Name, Uid: string(c.UID)})
	}
	return out
}

// call runs one gRPC call with a deadline and fails the test on its error.
func call[R any](h *harness, name string, do func(context.Context) (R, error)) R {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := do(ctx)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	return resp
}

func (h *harness) prepare(claims ...*resourceapi.ResourceClaim) *drapb.NodePrepareResourcesResponse {
	h.t.Helper()
	return call(h, "NodePrepareResources", func(ctx context.Context) (*drapb.NodePrepareResourcesResponse, error) {
		return h.client.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: grpcClaims(claims)})
	})
}

func (h *harness) unprepare(claims ...*resourceapi.ResourceClaim) *drapb.NodeUnprepareResourcesResponse {
	h.t.Helper()
	return call(h, "NodeUnprepareResources", func(ctx context.Context) (*drapb.NodeUnprepareResourcesResponse, error) {
		return h.client.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: grpcClaims(claims)})
	})
}

func readSpec(t *testing.T, dir, uid string) cdiSpec {
	t.Helper()
	data, err := os.ReadFile(cdiSpecPath(dir, uid))
	if err != nil {
		t.Fatal(err)
	}
	var spec cdiSpec
	decoder := json.NewDecoder(strings.NewReader(string(data)))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&spec); err != nil {
		t.Fatalf("the CDI spec does not parse: %v\n%s", err, data)
	}
	return spec
}

func TestPrepareMakesTheAllocatedInstancesAndTheirCDISpec(t *testing.T) {
	mig := &fakeMig{gpus: 2, instances: map[[2]int]int{}}
	c := claim("a", "uid-a", node, "gpu1-3g-40gb-s4", "gpu0-1g-10gb-s6")
	h := newHarness(t, mig, c)
	if len(h.annotate) != 2 || h.annotate[1].UUID != "GPU-1" {
		t.Fatalf("the node's GPUs: %+v", h.annotate)
	}
	resp := h.prepare(c)
	got := resp.Claims["uid-a"]
	if got == nil || got.Error != "" {
		t.Fatalf("prepare: %+v", resp)
	}
	if len(got.Devices) != 2 || got.Devices[0].DeviceName != "gpu1-3g-40gb-s4" || got.Devices[0].PoolName != node {
		t.Fatalf("devices: %+v", got.Devices)
	}
	if want := CDIKind + "=uid-a-gpu1-3g-40gb-s4"; len(got.Devices[0].CdiDeviceIds) != 1 || got.Devices[0].CdiDeviceIds[0] != want {
		t.Fatalf("CDI IDs %v, want %s", got.Devices[0].CdiDeviceIds, want)
	}
	if want := (map[[2]int]int{{1, 4}: 9, {0, 6}: 19}); fmt.Sprint(mig.held()) != fmt.Sprint(want) {
		t.Fatalf("instances %v, want %v", mig.held(), want)
	}
	spec := readSpec(t, h.cdi, "uid-a")
	if spec.Kind != CDIKind || len(spec.Devices) != 2 || spec.Devices[0].Name != "uid-a-gpu1-3g-40gb-s4" {
		t.Fatalf("spec: %+v", spec)
	}
	env := strings.Join(spec.Devices[0].ContainerEdits.Env, " ")
	if !strings.Contains(env, "NVIDIA_VISIBLE_DEVICES=MIG-1-4") || !strings.Contains(env, "CUDA_VISIBLE_DEVICES=MIG-1-4") {
		t.Fatalf("env: %s", env)
	}
}

func TestPrepareAndUnprepareAreIdempotent(t *testing.T) {
	mig := &fakeMig{gpus: 1, instances: map[[2]int]int{}}
	c := claim("a", "uid-a", node, "gpu0-2g-20gb-s2")
	h := newHarness(t, mig, c)
	first := h.prepare(c)
	second := h.prepare(c)
	if fmt.Sprint(first.Claims["uid-a"].Devices) != fmt.Sprint(second.Claims["uid-a"].Devices) {
		t.Fatalf("a second prepare answers differently: %v vs %v", first, second)
	}
	if mig.creates != 1 {
		t.Fatalf("%d creates for one claim prepared twice", mig.creates)
	}
	for i := 0; i < 2; i++ {
		if resp := h.unprepare(c); resp.Claims["uid-a"].Error != "" {
			t.Fatalf("unprepare %d: %v", i, resp)
		}
		if uids, err := h.prepared(); err != nil || len(uids) != 0 {
			t.Fatalf("the checkpoint still holds %v (%v)", uids, err)
		}
		if len(mig.held()) != 0 {
			t.Fatalf("instances left: %v", mig.held())
		}
		if _, err := os.Stat(cdiSpecPath(h.cdi, "uid-a")); !os.IsNotExist(err) {
			t.Fatalf("the CDI spec is still there: %v", err)
		}
	}
	// A claim never prepared here unprepares to nothing.
	if resp := h.unprepare(claim("b", "uid-b", node)); resp.Claims["uid-b"].Error != "" {
		t.Fatalf("unprepare of an unknown claim: %v", resp)
	}
}

func TestAPluginKilledHalfWayFinishesWhenAskedAgain(t *testing.T) {
	mig := &fakeMig{gpus: 1, instances: map[[2]int]int{}, failAt: 2}
	c := claim("a", "uid-a", node, "gpu0-1g-10gb-s0", "gpu0-1g-10gb-s1", "gpu0-3g-40gb-s4")
	h := newHarness(t, mig, c)
	if resp := h.prepare(c); !strings.Contains(resp.Claims["uid-a"].Error, "injected failure") {
		t.Fatalf("want the injected failure, got %v", resp)
	}
	h.stop()
	h.start() // a new process on the same state
	if uids, _ := h.prepared(); fmt.Sprint(uids) != "[uid-a]" {
		t.Fatalf("the checkpoint lost the half-prepared claim: %v", uids)
	}
	if resp := h.prepare(c); resp.Claims["uid-a"].Error != "" {
		t.Fatalf("prepare after the restart: %v", resp)
	}
	if want := (map[[2]int]int{{0, 0}: 19, {0, 1}: 19, {0, 4}: 9}); fmt.Sprint(mig.held()) != fmt.Sprint(want) {
		t.Fatalf("instances %v, want %v", mig.held(), want)
	}
	readSpec(t, h.cdi, "uid-a")
	h.unprepare(c)
	if len(mig.held()) != 0 {
		t.Fatalf("instances left: %v", mig.held())
	}
}

func TestPrepareRefusesWhatIsNotThisNodesOrOverlapsAnotherClaim(t *testing.T) {
	mig := &fakeMig{gpus: 1, instances: map[[2]int]int{}}
	held := claim("held", "uid-held", node, "gpu0-3g-40gb-s4")
	overlap := claim("overlap", "uid-overlap", node, "gpu0-2g-20gb-s4")
	unknown := claim("unknown", "uid-unknown", node, "gpu3-1g-10gb-s0")
	elsewhere := claim("elsewhere", "uid-elsewhere", "node-9", "gpu0-1g-10gb-s0")
	otherGPU := claim("other-gpu", "uid-other-gpu", node, "gpu1-3g-40gb-s4")
	besides := claim("besides", "uid-besides", node, "gpu0-4g-40gb-s0")
	mig.gpus = 2
	h := newHarness(t, mig, held, overlap, unknown, elsewhere, otherGPU, besides)
	h.prepare(held)
	resp := h.prepare(overlap, unknown, elsewhere, otherGPU, besides)
	for _, fine := range []string{"uid-other-gpu", "uid-besides"} {
		if e := resp.Claims[fine].Error; e != "" {
			t.Fatalf("%s does not overlap, yet: %s", fine, e)
		}
	}
	if e := resp.Claims["uid-overlap"].Error; !strings.Contains(e, "overlaps gpu0-3g-40gb-s4, held by claim default/held") {
		t.Fatalf("overlap: %q", e)
	}
	if e := resp.Claims["uid-unknown"].Error; !strings.Contains(e, `device "gpu3-1g-10gb-s0" is not a MIG placement of node node-0`) {
		t.Fatalf("unknown device: %q", e)
	}
	if got := resp.Claims["uid-elsewhere"]; got.Error != "" || len(got.Devices) != 0 {
		t.Fatalf("another node's devices are not this plugin's: %+v", got)
	}
	if want := (map[[2]int]int{{0, 4}: 9, {1, 4}: 9, {0, 0}: 5}); fmt.Sprint(mig.held()) != fmt.Sprint(want) {
		t.Fatalf("instances %v, want %v", mig.held(), want)
	}
}

func TestACorruptCheckpointIsAnErrorNamingIt(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "checkpoint.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := NewDriver(context.Background(), node, &fakeMig{gpus: 1}, state, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "checkpoint.json") {
		t.Fatalf("want an error naming the checkpoint, got %v", err)
	}
}

// The same through tessera's NVML layer on the project's fake NVML: the
// instances NVML reports are the claims' allocations.
func TestPrepareOnTheFakeNVMLThroughTessera(t *testing.T) {
	binary, library := os.Getenv("TESSERA_BINARY"), os.Getenv("TESSERA_FAKE_NVML")
	if binary == "" || library == "" {
		t.Skip("TESSERA_BINARY and TESSERA_FAKE_NVML are not set (make test sets them)")
	}
	t.Setenv("TESSERA_FAKE_NVML_STATE", filepath.Join(t.TempDir(), "nvml.json"))
	t.Setenv("TESSERA_FAKE_NVML_DEVICES", "a100-80gb,a100-80gb")
	mig := &TesseraMig{Binary: binary, NVML: library}
	claims := []*resourceapi.ResourceClaim{
		claim("a", "uid-a", node, "gpu0-3g-40gb-s4"),
		claim("b", "uid-b", node, "gpu0-1g-20gb-s2", "gpu1-7g-80gb-s0"),
		claim("c", "uid-c", node, "gpu0-1g-10gb-s0"),
	}
	h := newHarness(t, mig, claims...)
	resp := h.prepare(claims...)
	for uid, got := range resp.Claims {
		if got.Error != "" {
			t.Fatalf("%s: %s", uid, got.Error)
		}
	}
	instances := func() []string {
		gpus, err := mig.Inventory(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gpus {
			for _, gi := range g.Instances {
				out = append(out, fmt.Sprintf("gpu%d profile %d start %d", g.Index, gi.ProfileID, gi.Start))
			}
		}
		sort.Strings(out)
		return out
	}
	want := []string{"gpu0 profile 15 start 2", "gpu0 profile 19 start 0", "gpu0 profile 9 start 4", "gpu1 profile 0 start 0"}
	if got := instances(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NVML reports %v, want %v", got, want)
	}
	for _, c := range claims {
		spec := readSpec(t, h.cdi, string(c.UID))
		if !strings.HasPrefix(spec.Devices[0].ContainerEdits.Env[0], "NVIDIA_VISIBLE_DEVICES=MIG-") {
			t.Fatalf("%s: env %v", c.Name, spec.Devices[0].ContainerEdits.Env)
		}
	}
	h.unprepare(claims...)
	if got := instances(); len(got) != 0 {
		t.Fatalf("instances left: %v", got)
	}
	if out, err := exec.Command(binary, "agent", "inventory", "--nvml", library).CombinedOutput(); err != nil {
		t.Fatalf("inventory: %v: %s", err, out)
	}
}
