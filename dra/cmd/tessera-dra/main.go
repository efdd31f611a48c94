// tessera-dra is the mig.tessera.io DRA driver (docs/dra.md):
//
//	tessera-dra controller      publish every node's MIG devices, steered by Tessera
//	tessera-dra kubelet-plugin  prepare and unprepare claims on one node through NVML
//	tessera-dra prepare|unprepare  call a kubelet plugin's gRPC as the kubelet does
//
// Bad flags exit 2 naming the flag; a failure while running exits 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"

	"tessera.local/dra/internal/controller"
	"tessera.local/dra/internal/plugin"
	"tessera.local/dra/internal/slices"
	"tessera.local/dra/internal/steer"
)

const usage = `tessera-dra: the mig.tessera.io Kubernetes DRA driver for MIG (docs/dra.md)

Usage:
  tessera-dra controller --tessera URL[,URL...] [flags]
      Publish every node's MIG placements as ResourceSlices (resource.k8s.io/v1,
      one CounterSet per GPU). Steered (default): only the devices allocated now
      and, per profile, the one Tessera's policy would give the next claim, so
      the scheduler's allocator takes the policy's choice. --publish all offers
      every legal placement and lets the allocator choose.
  tessera-dra kubelet-plugin --node NAME [flags]
      Serve the kubelet's NodePrepareResources / NodeUnprepareResources: create
      and destroy the claim's MIG instance through tessera's NVML layer, write
      its CDI spec; annotate the Node with its GPUs for the controller.

  tessera-dra prepare|unprepare --socket PATH NAMESPACE/NAME/UID...
      Call a kubelet plugin's NodePrepareResources or NodeUnprepareResources as
      the kubelet does, for the claims given, and print its answer as JSON; exit
      1 when a claim fails. For checking a node by hand, and for the tests.

Run "tessera-dra COMMAND -h" for a command's flags.
Exit codes: 0 ok, 1 failure while running, 2 bad flags.
`

// usageError is a bad command line: exit 2.
type usageError struct{ error }

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	var bad usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
	case errors.As(err, &bad):
		fmt.Fprintf(os.Stderr, "tessera-dra: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "tessera-dra: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{errors.New("a command is needed: controller, kubelet-plugin, prepare or unprepare")}
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "controller":
		return runController(args[1:], stderr)
	case "kubelet-plugin":
		return runPlugin(args[1:], stderr)
	case "prepare", "unprepare":
		return runCall(args[0], args[1:], stdout, stderr)
	}
	return usageError{fmt.Errorf("unknown command %q: want controller, kubelet-plugin, prepare or unprepare", args[0])}
}

// newFlagSet is a command's flags, starting with the --kubeconfig both take.
func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, fs.String("kubeconfig", "", "kubeconfig file (default: the pod's service account)")
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

func kubeClient(kubeconfig string) (kubernetes.Interface, error) {
	var config *rest.Config
	var err error
	if kubeconfig == "" {
		config, err = rest.InClusterConfig()
		if err != nil {
			return nil, usageError{fmt.Errorf("--kubeconfig: not given, and not in a pod: %w", err)}
		}
	} else {
		if _, statErr := os.Stat(kubeconfig); statErr != nil {
			return nil, usageError{fmt.Errorf("--kubeconfig %s: %w", kubeconfig, statErr)}
		}
		config, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, usageError{fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)}
		}
	}
	config.QPS, config.Burst = 200, 400
	return kubernetes.NewForConfig(config)
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

func runController(args []string, stderr io.Writer) error {
	fs, kubeconfig := newFlagSet("controller", stderr)
	servers := fs.String("tessera", "", "tessera serve URL, http://HOST:PORT; several, comma-separated, for replicas (required)")
	tokenFile := fs.String("token-file", "", "file holding tessera serve's bearer token")
	gpu := fs.String("gpu", "a100-80gb", "catalog model of the nodes' MIG GPUs (tessera gpus lists them)")
	policy := fs.String("policy", "steer", "placement policy that steers (tessera replay --help lists them; DRA runs them without migrations)")
	publish := fs.String("publish", "steered", "steered (the policy's next choice per profile) or all (every legal placement)")
	statusListen := fs.String("status-listen", "", "serve GET /status (JSON) and /healthz on this 127.0.0.1:PORT or HOST:PORT")
	timeout := fs.Duration("timeout", 10*time.Second, "how long one call to tessera serve may take")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *servers == "" {
		return usageError{errors.New("--tessera: required (the tessera serve that runs the policy)")}
	}
	if *publish != "steered" && *publish != "all" {
		return usageError{fmt.Errorf("--publish %q: want steered or all", *publish)}
	}
	if *timeout <= 0 || *timeout > 10*time.Minute {
		return usageError{fmt.Errorf("--timeout %v: want more than 0 and at most 10m", *timeout)}
	}
	token, err := readToken(*tokenFile)
	if err != nil {
		return err
	}
	client, err := steer.NewClient(*servers, token, *timeout)
	if err != nil {
		return usageError{err}
	}
	var listener net.Listener
	if *statusListen != "" {
		listener, err = net.Listen("tcp", *statusListen)
		if err != nil {
			return usageError{fmt.Errorf("--status-listen %s: %w", *statusListen, err)}
		}
	}
	kube, err := kubeClient(*kubeconfig)
	if err != nil {
		return err
	}
	c, err := controller.New(controller.Options{
		Kube: kube, Steer: client, GPU: *gpu, Policy: *policy, PublishAll: *publish == "all", Resync: 10 * time.Minute,
	})
	if err != nil {
		return usageError{err}
	}
	ctx, cancel := signalContext()
	defer cancel()
	if listener != nil {
		go serveStatus(ctx, listener, c)
	}
	return c.Run(ctx)
}

func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", usageError{fmt.Errorf("--token-file: %w", err)}
	}
	token := strings.TrimSpace(string(data))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", usageError{fmt.Errorf("--token-file %s: want one token on one line", path)}
	}
	return token, nil
}

func serveStatus(ctx context.Context, listener net.Listener, c *controller.Controller) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.Status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	_ = server.Serve(listener)
}

func runPlugin(args []string, stderr io.Writer) error {
	fs, kubeconfig := newFlagSet("kubelet-plugin", stderr)
	node := fs.String("node", "", "this node's name (required; in a DaemonSet, from spec.nodeName)")
	tessera := fs.String("tessera-binary", "tessera", "the tessera executable (its agent commands drive NVML)")
	nvml := fs.String("nvml", "libnvidia-ml.so.1", "NVML library tessera loads")
	stateDir := fs.String("state-dir", "/var/lib/kubelet/plugins/"+slices.DriverName, "the plugin's socket and checkpoint")
	registrarDir := fs.String("registrar-dir", "/var/lib/kubelet/plugins_registry", "the kubelet's plugin registration directory")
	cdiDir := fs.String("cdi-dir", "/var/run/cdi", "where CDI specs are written")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *node == "" {
		return usageError{errors.New("--node: required")}
	}
	for flagName, dir := range map[string]string{"--state-dir": *stateDir, "--registrar-dir": *registrarDir, "--cdi-dir": *cdiDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return usageError{fmt.Errorf("%s %s: %w", flagName, dir, err)}
		}
	}
	kube, err := kubeClient(*kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	driver, gpus, err := plugin.NewDriver(ctx, *node, &plugin.TesseraMig{Binary: *tessera, NVML: *nvml}, *stateDir, *cdiDir)
	if err != nil {
		return err
	}
	if err := annotateNode(ctx, kube, *node, gpus); err != nil {
		return err
	}
	helper, err := kubeletplugin.Start(ctx, driver,
		kubeletplugin.DriverName(slices.DriverName),
		kubeletplugin.NodeName(*node),
		kubeletplugin.KubeClient(kube),
		kubeletplugin.PluginDataDirectoryPath(*stateDir),
		kubeletplugin.RegistrarDirectoryPath(*registrarDir),
	)
	if err != nil {
		return err
	}
	<-ctx.Done()
	helper.Stop()
	return nil
}

// runCall calls the plugin at --socket for the claims NAMESPACE/NAME/UID.
func runCall(command string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the plugin's gRPC socket, <state-dir>/dra.sock (required)")
	timeout := fs.Duration("timeout", time.Minute, "how long the call may take")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if *socket == "" {
		return usageError{errors.New("--socket: required")}
	}
	if *timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %v: want more than 0", *timeout)}
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no claim given: NAMESPACE/NAME/UID")}
	}
	var claims []*drapb.Claim
	for _, arg := range fs.Args() {
		parts := strings.Split(arg, "/")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return usageError{fmt.Errorf("claim %q: want NAMESPACE/NAME/UID", arg)}
		}
		claims = append(claims, &drapb.Claim{Namespace: parts[0], Name: parts[1], Uid: parts[2]})
	}
	conn, err := grpc.NewClient("unix://"+*socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return usageError{fmt.Errorf("--socket %s: %w", *socket, err)}
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	client := drapb.NewDRAPluginClient(conn)
	var answer any
	var failed map[string]string
	if command == "prepare" {
		resp, err := client.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: claims})
		if err != nil {
			return fmt.Errorf("NodePrepareResources at %s: %w", *socket, err)
		}
		answer, failed = resp, claimErrors(resp.Claims)
	} else {
		resp, err := client.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: claims})
		if err != nil {
			return fmt.Errorf("NodeUnprepareResources at %s: %w", *socket, err)
		}
		answer, failed = resp, claimErrors(resp.Claims)
	}
	out, err := json.MarshalIndent(answer, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(out))
	if len(failed) > 0 {
		return fmt.Errorf("%s: %d of %d claims failed: %v", command, len(failed), len(claims), failed)
	}
	return nil
}

// claimErrors is the error of each claim that failed in a plugin's answer,
// by UID.
func claimErrors[C interface{ GetError() string }](claims map[string]C) map[string]string {
	failed := map[string]string{}
	for uid, claim := range claims {
		if e := claim.GetError(); e != "" {
			failed[uid] = e
		}
	}
	return failed
}

// annotateNode records the node's MIG GPUs for the controller.
func annotateNode(ctx context.Context, kube kubernetes.Interface, node string, gpus []slices.GPU) error {
	value, err := json.Marshal(gpus)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{controller.AnnotationGPUs: string(value)}},
	})
	if err != nil {
		return err
	}
	_, err = kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("annotating node %s with its GPUs: %w", node, err)
	}
	return nil
}
