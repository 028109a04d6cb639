"""Anchor for the gateway benchmarks: jupyter_client talking straight to the
same kernel (over ZMQ, via its connection file) that evalhost reaches
through the gateway. Prints one JSON object of millisecond medians."""
import json, statistics, sys, time
import jupyter_client

kernel_id, n = sys.argv[1], int(sys.argv[2])
kc = jupyter_client.BlockingKernelClient()
kc.load_connection_file(jupyter_client.find_connection_file(kernel_id))
kc.start_channels()
kc.wait_for_ready(timeout=30)


def run(code):
    mid = kc.execute(code)
    reply = idle = False
    while not (reply and idle):
        if not reply:
            try:
                m = kc.get_shell_msg(timeout=0.001)
                reply = m["parent_header"].get("msg_id") == mid
            except Exception:
                pass
        try:
            m = kc.get_iopub_msg(timeout=0.001)
        except Exception:
            continue
        if m["parent_header"].get("msg_id") == mid and m["msg_type"] == "status" \
                and m["content"]["execution_state"] == "idle":
            idle = True


run("1+1")
rt = []
for _ in range(n):
    t = time.perf_counter()
    run("1+1")
    rt.append((time.perf_counter() - t) * 1e3)

intr = []
for _ in range(max(1, n // 20)):
    mid = kc.execute("import time; time.sleep(30)")
    time.sleep(0.1)
    t = time.perf_counter()
    kc.control_channel.send(kc.session.msg("interrupt_request", {}))
    while True:
        m = kc.get_iopub_msg(timeout=10)
        if m["parent_header"].get("msg_id") == mid and m["msg_type"] == "status" \
                and m["content"]["execution_state"] == "idle":
            break
    intr.append((time.perf_counter() - t) * 1e3)
    while kc.shell_channel.msg_ready():
        kc.get_shell_msg()

t = time.perf_counter()
km, kc2 = jupyter_client.manager.start_new_kernel()
start = (time.perf_counter() - t) * 1e3
kc2.stop_channels()
km.shutdown_kernel(now=True)
kc.stop_channels()
print(json.dumps({"roundtrip_p50_ms": statistics.median(rt), "interrupt_p50_ms": statistics.median(intr),
                  "start_ms": start}))
