#!/usr/bin/python3
"""The page of `racksim serve` in a real browser (Debian's headless Chromium through chromedriver and
python3-selenium, loopback only). It loads the page, checks that every resource came from the server itself
(the page works offline), moves sliders and toggles, and checks that plotted values equal the CLI's JSON for
the command each point says reproduces it: Fig 4 (course model, then the engine), Fig 2 (placement outcomes
in both modes) and Fig 3 (sharing verdicts). Writes a screenshot of each figure to out/serve_fig{4,2,3}.png;
scripts/update-serve-screenshots.sh copies them to docs/img/ for the README."""
import os
import shutil
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from serve_helpers import Server, cli_command

OUT = os.path.join(os.environ["RACKSIM_SOURCE_DIR"], "out")
# Flags this closed-network machine needs, or Chromium hangs on start (no sandbox as root, no network calls).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1400,1800", "--force-device-scale-factor=1"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def wait_ready(driver, *figures, timeout=240):
    """Waits until each figure's section says data-ready=1 (its requests answered and drawn)."""
    deadline = time.monotonic() + timeout
    time.sleep(0.2)  # a change event starts the redraw after this returns
    while time.monotonic() < deadline:
        if all(driver.find_element(By.ID, f).get_attribute("data-ready") == "1" for f in figures):
            return True
        time.sleep(0.2)
    raise TimeoutError(f"{figures} not drawn within {timeout} s")


def scroll_to(driver, figure):
    """Puts the figure's section at the top of the window (Chromium's screenshots crop to the viewport)."""
    element = driver.find_element(By.ID, figure)
    driver.execute_script("arguments[0].scrollIntoView(true)", element)
    time.sleep(0.2)
    return element


def screenshot(driver, figure, name, scroll=True):
    element = scroll_to(driver, figure) if scroll else driver.find_element(By.ID, figure)
    element.screenshot(os.path.join(OUT, name))


def points(driver, svg, machine, algo):
    return driver.find_elements(By.CSS_SELECTOR, f"#{svg} .point[data-machine='{machine}'][data-algo='{algo}']")


def same_as_cli(point, what):
    """The plotted time equals the CLI's time_us for the command the point shows."""
    command = point.get_attribute("data-command")
    answer = cli_command(command)
    plotted = float(point.get_attribute("data-time-us"))
    check(plotted == answer["time_us"], f"{what}: plotted {plotted} us == `{command}` -> {answer['time_us']} us")
    return plotted, command


def fig4(driver):
    wait_ready(driver, "fig4")
    pts = points(driver, "fig4-racks", "gb200-nvl72", "hierarchical")
    check(len(pts) == 4, f"course model, GB200 hierarchical at 1, 2, 4, 8 racks: {len(pts)} points")
    before, command = same_as_cli(pts[-1], "course model, GB200, 8 racks, 1 GiB")
    scroll_to(driver, "fig4")  # first: scrolling later would move the point away from the pointer
    ActionChains(driver).move_to_element(pts[-1]).perform()
    tip = driver.find_element(By.ID, "tooltip")
    check(tip.is_displayed() and command in tip.text, "hovering a point shows its command")
    check("576 GPUs" in tip.text and "busbw" in tip.text, f"the tooltip has the numbers: {tip.text[:80]!r}")
    n_size = len(driver.find_elements(By.CSS_SELECTOR, "#fig4-size .point"))
    check(n_size >= 3 * 23, f"panel (a): {n_size} points (3 machines x 3 algorithms x 23 sizes, 1 KiB-4 GiB)")
    screenshot(driver, "fig4", "serve_fig4.png", scroll=False)  # with the tooltip
    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, "#fig4 h2")).perform()  # tooltip off

    # The NIC slider: 0 (each system's own) -> 100 GB/s in ten key presses; the cross-rack term halves.
    nic = driver.find_element(By.ID, "f4-nic")
    nic.click()  # a click lands mid-track: start from the left end
    nic.send_keys(Keys.HOME)
    for _ in range(10):
        nic.send_keys(Keys.ARROW_RIGHT)
    wait_ready(driver, "fig4")
    check(driver.find_element(By.ID, "f4-nic-out").text == "100 GB/s", "NIC slider reads 100 GB/s")
    pt = points(driver, "fig4-racks", "gb200-nvl72", "hierarchical")[-1]
    after, command = same_as_cli(pt, "course model, GB200, 8 racks, NIC 100 GB/s")
    check("--nic-GBps 100" in command and after < before, f"faster NIC, faster all-reduce: {after} < {before} us")

    # The engine at vendor peaks, on GB200 hierarchical only, 1-2 racks (a few seconds of engine time).
    for name, keep in [("machine", "gb200-nvl72"), ("algo", "hierarchical")]:
        for box in driver.find_elements(By.CSS_SELECTOR, f"#fig4 input[name={name}]"):
            if box.is_selected() != (box.get_attribute("value") == keep):
                box.click()
                wait_ready(driver, "fig4")
    racks = driver.find_element(By.ID, "f4-racks")
    racks.send_keys(Keys.HOME)
    racks.send_keys(Keys.ARROW_RIGHT)
    wait_ready(driver, "fig4")
    driver.find_element(By.CSS_SELECTOR, "#fig4 input[name=layer][value=peak]").click()
    t0 = time.monotonic()
    wait_ready(driver, "fig4")
    print(f"     engine layer drawn in {time.monotonic() - t0:.1f} s", flush=True)
    size_pts = points(driver, "fig4-size", "gb200-nvl72", "hierarchical")
    check(len(size_pts) == 12, f"engine sweep, 1 KiB-4 GiB by 4: {len(size_pts)} points")
    same_as_cli(size_pts[-1], "engine at vendor peaks, GB200 one rack, 4 GiB (sweep point vs collective)")
    rack_pts = points(driver, "fig4-racks", "gb200-nvl72", "hierarchical")
    check(len(rack_pts) == 2, f"engine, 1 and 2 racks: {len(rack_pts)} points")
    _, command = same_as_cli(rack_pts[-1], "engine at vendor peaks, GB200 2 racks, NIC 100 GB/s")
    check("--calibration none" in command and "--nic-GBps 100" in command, f"engine command: {command}")


def fig2(driver):
    wait_ready(driver, "fig2")
    screenshot(driver, "fig2", "serve_fig2.png")

    def compare(what):
        for mode in ["numa", "cdmm"]:
            cmd = driver.find_element(By.CSS_SELECTOR, f"#fig2-{mode} p.cmd").text.lstrip("$ ")
            answer = cli_command(cmd)
            rows = driver.find_elements(By.CSS_SELECTOR, f"#fig2-{mode} table.outcomes tr[data-alloc]")
            shown = [(r.get_attribute("data-alloc"), r.find_elements(By.TAG_NAME, "td")[1].text) for r in rows]
            want = [(a["name"], a["outcome"]) for a in answer["allocations"]]
            check(shown == want, f"{what}, {mode}: outcomes {shown} == CLI {want}")

    compare("course's self-check 1")
    numa_x = driver.find_element(By.CSS_SELECTOR, "#fig2-numa tr[data-alloc='x']").text
    check("failed" in numa_x and "spilled" in numa_x, "NUMA mode: x fails because the kernel spilled CPU pages onto gpu0")
    spill = driver.find_elements(By.CSS_SELECTOR, "#fig2-numa rect[data-node='gpu0'][data-alloc='prep']")
    check(len(spill) == 1 and spill[0].get_attribute("fill") == "#f2c12e", "the spilled pages are drawn amber on gpu0")
    # The reader adds an allocation with the form.
    name = driver.find_element(By.ID, "f2-name")
    name.clear()
    name.send_keys("kv")
    driver.find_element(By.CSS_SELECTOR, "#f2-kind option[value=managed]").click()
    size = driver.find_element(By.ID, "f2-size")
    size.clear()
    size.send_keys("20")
    driver.find_element(By.CSS_SELECTOR, "#f2-node option[value=gpu1]").click()
    driver.find_element(By.ID, "f2-add").click()
    wait_ready(driver, "fig2")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#f2-list li")) == 4, "the allocation list has 4 entries")
    compare("after adding kv:managed:20GB:gpu1")


def fig3(driver):
    wait_ready(driver, "fig3")

    def verdict(what, expect_ok):
        wait_ready(driver, "fig3")
        v = driver.find_element(By.CSS_SELECTOR, "#fig3-out .verdict")
        cmd = driver.find_element(By.CSS_SELECTOR, "#fig3-out p.cmd").text.lstrip("$ ")
        share = cli_command(cmd)["share"]
        check((v.get_attribute("data-ok") == "1") == share["ok"] == expect_ok,
              f"{what}: page says {'works' if v.get_attribute('data-ok') == '1' else 'fails'}, CLI ok={share['ok']}")
        if not share["ok"]:
            check(share["reason"] in v.text, f"{what}: the page shows the CLI's reason")
        return v.text

    verdict("same process", True)
    driver.find_element(By.CSS_SELECTOR, "input[name=f3-case][value=tray]").click()
    check("posix_fd" in verdict("same tray", True), "same tray: a POSIX fd")
    driver.find_element(By.CSS_SELECTOR, "input[name=f3-case][value=domain]").click()
    check("fabric" in verdict("another tray, same NVLink domain", True), "another tray: a fabric handle")
    screenshot(driver, "fig3", "serve_fig3.png")
    driver.find_element(By.CSS_SELECTOR, "#f3-channels option[value=none]").click()
    check("channel0" in verdict("another tray, no IMEX channel in the container", False), "the missing channel is named")
    driver.find_element(By.CSS_SELECTOR, "#f3-channels option[value='0']").click()
    driver.find_element(By.CSS_SELECTOR, "input[name=f3-case][value=other]").click()
    check("ClusterUUID" in verdict("another NVLink domain", False), "another domain: different ClusterUUID")


def main():
    os.makedirs(OUT, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="racksim-chromium-")
    server = Server("--workers", "2")
    driver = None
    try:
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + profile]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Without the sanitizer build's LD_PRELOAD (libasan): chromedriver's memory map leaves ASan no room for
        # its shadow ("Shadow memory range interleaves with an existing memory mapping"), and it aborted.
        browser_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=browser_env), options=options)
        driver.set_page_load_timeout(60)
        start = time.monotonic()
        driver.get(server.url)
        wait_ready(driver, "fig4", "fig2", "fig3")
        print(f"     page drawn in {time.monotonic() - start:.1f} s", flush=True)
        resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        check(resources and all(r.startswith(server.url) for r in resources),
              f"all {len(resources)} resources from the server itself (offline): {[r for r in resources if not r.startswith(server.url)]}")
        with open("/usr/share/javascript/d3/d3.min.js") as f:
            served = server.get("/vendor/d3.min.js")[1]
            check(served == f.read() and driver.execute_script("return typeof d3 !== 'undefined' && d3.version").startswith("3."),
                  "D3 is Debian's libjs-d3, served by racksim")
        fig4(driver)
        fig2(driver)
        fig3(driver)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check(not errors, f"no errors in the browser console: {errors[:3]}")
    finally:
        if driver:
            driver.quit()
        check(server.alive(), "server still up")
        server.stop()
        shutil.rmtree(profile, ignore_errors=True)
    print(f"screenshots: {', '.join(os.path.join(OUT, f'serve_fig{n}.png') for n in (4, 2, 3))}")
    print(f"{len(failures)} failed" if failures else "all browser checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
