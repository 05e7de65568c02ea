"""The web calculator (docs/web.md) in a real browser: Debian's headless Chromium, driven by
Selenium through chromedriver, opens BUILD/web/site/index.html from file:// (no server), fills
the form as a user does and checks the page's answer against the CLI's JSON for the same
plan (MEMPLAN_CLI: the memplan binary of the same build). Saves a screenshot
(MEMPLAN_WEB_SCREENSHOT) of the filled form; docs/web.md shows one."""

import json
import os
import pathlib
import subprocess
import time

import pytest

pytest.importorskip("selenium", reason="python3-selenium is not installed (scripts/setup.sh installs it)")
for program in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
    if not os.access(program, os.X_OK):
        pytest.skip(f"{program} is not installed (Debian's chromium and chromium-driver; scripts/setup.sh "
                    "installs them)", allow_module_level=True)

from selenium import webdriver  # noqa: E402  (after the skips above)
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

SITE = pathlib.Path(os.environ["MEMPLAN_WEB_SITE"])
CLI = os.environ["MEMPLAN_CLI"]
SCREENSHOT = os.environ.get("MEMPLAN_WEB_SCREENSHOT", str(SITE.parent / "screenshot.png"))
DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def cli_json(*args):
    done = subprocess.run([CLI, "estimate", *args, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1500"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.get((SITE / "index.html").as_uri())
    yield driver
    driver.quit()


def settled(driver, timeout=30):
    """Waits until the page has answered the last change, and returns its report."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.execute_script("return document.body.dataset.busy") == "false":
            return driver.execute_script("return window.memplanReport")
        time.sleep(0.05)
    raise AssertionError("the page did not answer within %ss" % timeout)


def type_into(driver, element_id, text):
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(text)


def test_the_first_answer_is_the_cli_default(browser):
    report = settled(browser)
    assert report == cli_json("llama-2-7b")
    shown = browser.find_element(By.ID, "total")
    assert int(shown.get_attribute("data-bytes")) == report["total_bytes"]
    assert shown.text == "14.30 GiB"  # 15,353,380,864 bytes / 2^30, as the CLI's table writes it
    first = browser.execute_script("return window.memplanFirstResultMs")
    assert 0 < first < 30000
    print(f"first result {first:.0f} ms after navigation; memplan.js {(SITE / 'memplan.js').stat().st_size} bytes")


def test_a_filled_form_is_the_cli_plan(browser):
    Select(browser.find_element(By.ID, "model")).select_by_value("mistral-7b-v0.1")
    Select(browser.find_element(By.ID, "workload")).select_by_value("generation")
    type_into(browser, "batch", "4")
    type_into(browser, "seq", "1024")
    Select(browser.find_element(By.ID, "gpu")).select_by_value("rtx-4090")
    browser.find_element(By.ID, "add-option").click()
    row = browser.find_elements(By.CSS_SELECTOR, ".extra-row")[-1]
    Select(row.find_element(By.TAG_NAME, "select")).select_by_value("new_tokens")
    row.find_element(By.TAG_NAME, "input").send_keys("64")
    report = settled(browser)
    want = cli_json("mistral-7b-v0.1", "-w", "generation", "--batch", "4", "--seq", "1024", "--gpu", "rtx-4090",
                    "--new-tokens", "64")
    assert report == want
    assert int(browser.find_element(By.ID, "total").get_attribute("data-bytes")) == want["total_bytes"]
    assert browser.find_element(By.ID, "verdict").text == want["verdict"].replace("_", " ")
    assert browser.find_element(By.ID, "command").text == (
        "memplan estimate mistral-7b-v0.1 --gpu rtx-4090 -w generation --batch 4 --seq 1024 --new-tokens 64")
    # One table row per component and per part of one, as the CLI's rows.
    rows = browser.find_elements(By.CSS_SELECTOR, "#rows tbody tr")
    assert len(rows) == sum(1 + len(c.get("detail", [])) for c in want["components"])
    # The chart: the plan at 128, 256, ..., 32768 tokens (Mistral-7B's context), and the GPU's line.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart circle")) == 9
    assert "rtx-4090" in browser.find_element(By.ID, "chart").text
    browser.save_screenshot(SCREENSHOT)


def test_a_pasted_config_is_the_model(browser):
    # Qwen2.5-0.5B's config.json: 494,032,768 parameters (keras-hub qwen_presets.py).
    config = DATA / "hf" / "qwen2.5-0.5b" / "config.json"
    browser.find_element(By.CSS_SELECTOR, "#config-box summary").click()
    browser.find_element(By.ID, "config").send_keys(config.read_text())
    report = settled(browser)
    assert report["model"]["params"] == 494_032_768
    assert report["total_bytes"] == cli_json(str(config), "-w", "generation", "--batch", "4", "--seq", "1024",
                                             "--gpu", "rtx-4090", "--new-tokens", "64")["total_bytes"]
    assert "494,032,768 parameters" in browser.find_element(By.ID, "summary").text
    browser.find_element(By.ID, "config").clear()
    settled(browser)


def test_bad_input_is_shown_as_the_cli_says_it(browser):
    type_into(browser, "batch", "0")
    settled(browser)
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed()
    assert error.text == "memplan: error: --batch must be an integer from 1 to 1,099,511,627,776, got 0"
    type_into(browser, "batch", "1")
    settled(browser)
    assert not browser.find_element(By.ID, "error").is_displayed()


def test_a_file_the_page_cannot_read_is_refused(browser):
    # A vision tower's .gguf (--mmproj) is a file: the page has none, and says so.
    for key, value in (("engine", "llama.cpp"), ("mmproj", "mmproj-model-f16.gguf")):
        browser.find_element(By.ID, "add-option").click()
        row = browser.find_elements(By.CSS_SELECTOR, ".extra-row")[-1]
        Select(row.find_element(By.TAG_NAME, "select")).select_by_value(key)
        row.find_element(By.TAG_NAME, "input").send_keys(value)
    settled(browser)
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed()
    assert error.text == ("memplan: error: the page reads no files: a vision tower's .gguf (mmproj) is priced by the "
                          "memplan command line")
    for row in browser.find_elements(By.CSS_SELECTOR, ".extra-row")[-2:]:
        row.find_element(By.CSS_SELECTOR, "button[title='Remove this option']").click()
    settled(browser)
    assert not browser.find_element(By.ID, "error").is_displayed()
