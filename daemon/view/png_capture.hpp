#pragma once
// `sonoflow-view --png FILE`: a picture of the page (3-D view, pressure panel, plots) for reports
// and CI artefacts, taken by headless Chromium pointed at this viewer's own server.
//
// Why a browser and not a renderer of our own: the picture is then exactly what a person sees
// (the same three.js scene and uPlot plots, fonts, legend), and nothing is drawn twice. The
// page has a capture mode (?capture=1): it loads the newest frames and the status history with
// plain requests instead of the stream, draws once, and is done, so Chromium's
// --virtual-time-budget ends the load deterministically. WebGL runs on SwiftShader (software),
// which needs no GPU and no display.
#include <string>

namespace sonoflow::daemon::view {

struct CaptureSettings {
  std::string chromium = "/usr/bin/chromium";
  int width = 1400, height = 1000;
  int budget_ms = 8000;   // virtual time the page gets to load and draw
  int timeout_s = 90;     // wall time before Chromium is killed
};

// Writes `file`; returns an empty string on success, else why not.
std::string capture_png(const std::string& url, const std::string& file, const CaptureSettings& settings);

}  // namespace sonoflow::daemon::view
