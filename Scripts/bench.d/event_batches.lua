-- Batches of goal events with fresh ids, for wrk: each request POSTs 50 conversions of goal
-- "purchase" by recorded users (known-0 … known-COUNT-1, in turn), in Flagpole's own format
-- (POST …/events) or in the Bucketeer SDK's envelope (POST …/register_events), with a delivery key.
-- Ids are unique across runs: a random prefix per run, then a counter.
--
-- usage: wrk ... -s event_batches.lua URL -- PATH COUNT KEY flagpole|bucketeer

local path
local count
local key
local format
local prefix
local events = 0

function init(args)
    path = args[1]
    count = tonumber(args[2])
    key = args[3]
    format = args[4]
    math.randomseed(os.time() + os.clock() * 1e6)
    prefix = string.format("%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
end

local function event(id, user, now)
    if format == "bucketeer" then
        return '{"id": "' .. id .. '", "type": 1, "event": {"@type": "type.googleapis.com/bucketeer.event.client.GoalEvent", '
            .. '"timestamp": ' .. now .. ', "goalId": "purchase", "value": 0, "userId": "' .. user .. '", '
            .. '"user": {"id": "' .. user .. '", "data": {}}, "tag": "", "sourceId": 2, "sdkVersion": "2.2.1", '
            .. '"metadata": {"app_version": "1.0.0", "os_version": "17.5", "device_model": "iPhone15,2", "device_type": "mobile"}}}'
    end
    return '{"id": "' .. id .. '", "user": "' .. user .. '", "goal": "purchase", "time": ' .. (now * 1000) .. '}'
end

function request()
    local now = os.time()
    local batch = {}
    for index = 1, 50 do
        events = events + 1
        batch[index] = event(prefix .. "-" .. events, "known-" .. (events % count), now)
    end
    local body = '{"events": [' .. table.concat(batch, ", ") .. ']}'
    local headers = { ["Content-Type"] = "application/json" }
    headers["Authorization"] = (format == "bucketeer") and key or ("Bearer " .. key)
    return wrk.format("POST", path, headers, body)
end
