-- wrk: each request a random one of the paths in $PATHS (one per line), as the parent $TOKEN —
-- or, with $TOKENS (when set and not empty) (a file of bearer tokens, one per line), as a random one of them (child devices).
local paths = {}
for line in io.lines(os.getenv("PATHS")) do paths[#paths + 1] = line end
local headers = {}
if (os.getenv("TOKENS") or "") ~= "" then
  for line in io.lines(os.getenv("TOKENS")) do headers[#headers + 1] = { ["Authorization"] = "Bearer " .. line } end
else
  headers[1] = { ["Authorization"] = "Bearer " .. os.getenv("TOKEN") }
end
-- $ENCODING (gzip, br): sent as Accept-Encoding, so answers come compressed (the compression bench).
if os.getenv("ENCODING") then
  for _, h in ipairs(headers) do h["Accept-Encoding"] = os.getenv("ENCODING") end
end
local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end
function request()
  return wrk.format("GET", paths[math.random(#paths)], headers[math.random(#headers)])
end
