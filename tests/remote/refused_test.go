package remote

import (
	"context"
	"errors"
	"os"
	"os/user"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/internal/remotetest"
)

// Enterprise Gateway refuses kernels for root (its default); here it is
// told to refuse whoever runs the test, so the case is the same for root
// in CI and for anyone else. evalhost sends that user as KERNEL_USERNAME,
// and the refusal says who, why and what to set; naming another user in
// KERNEL_USERNAME then gets a kernel.
func TestRefusedUserIsExplained(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skipf("no current user: %v", err)
	}
	g := remotetest.StartGateway(t, remotetest.GatewayOptions{
		Args: []string{"--EnterpriseGatewayApp.unauthorized_users={'" + me.Username + "'}"}})
	environ := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KERNEL_USERNAME=") {
			environ = append(environ, kv)
		}
	}
	c, err := gateway.NewClient(gateway.Config{URL: g.URL, Token: g.Token, KernelEnv: gateway.KernelEnvFrom(environ)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartKernel(context.Background(), gateway.KernelOptions{NoPrelude: true})
	var re *gateway.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, gateway.ErrForbidden) || errors.Is(err, gateway.ErrUnauthorized) {
		t.Fatalf("StartKernel = %v, want a *gateway.RefusedError", err)
	}
	for _, want := range []string{`KERNEL_USERNAME="` + me.Username + `"`, "User '" + me.Username + "' is not authorized",
		"Set KERNEL_USERNAME", "unauthorized_users", "PI_PYTHON_GATEWAY_TOKEN is not the problem"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	c, err = gateway.NewClient(gateway.Config{URL: g.URL, Token: g.Token,
		KernelEnv: gateway.KernelEnvFrom(append(environ, "KERNEL_USERNAME="+kernelUser))})
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.StartKernel(context.Background(), gateway.KernelOptions{NoPrelude: true})
	if err != nil {
		t.Fatalf("as %s: %v", kernelUser, err)
	}
	defer k.Close()
	var out strings.Builder
	if _, err := k.Execute(context.Background(), frames.Request{ID: "1", Code: "import os; print(os.environ.get('KERNEL_USERNAME'))"},
		func(f frames.Frame) { out.WriteString(f.Data) }); err != nil || out.String() != kernelUser+"\n" {
		t.Errorf("kernel saw KERNEL_USERNAME %q (%v), want %s", out.String(), err, kernelUser)
	}
}

// A wrong token is a 401, and says to set the token.
func TestWrongTokenSaysToken(t *testing.T) {
	g := remotetest.StartGateway(t, remotetest.GatewayOptions{})
	c, err := gateway.NewClient(gateway.Config{URL: g.URL, Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.StartKernel(context.Background(), gateway.KernelOptions{NoPrelude: true})
	if !errors.Is(err, gateway.ErrUnauthorized) || !strings.Contains(err.Error(), "set PI_PYTHON_GATEWAY_TOKEN") {
		t.Errorf("StartKernel with a wrong token = %v, want ErrUnauthorized naming PI_PYTHON_GATEWAY_TOKEN", err)
	}
}
