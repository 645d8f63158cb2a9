-- OFREP evaluations of recorded users for the serve-user row, for wrk: each request POSTs the
-- evaluation context of one of COUNT users recorded beforehand (known-0 … known-COUNT-1), in turn.
-- With ETAGS, a file of "USER ETAG" lines (the bulk answers' ETags, fetched before the run), each
-- request sends the user's ETag as If-None-Match: the 304 path of bulk evaluation.
--
-- usage: wrk ... -s ofrep.lua URL -- PATH COUNT [ETAGS]
-- PATH is the OFREP path (/t/TENANT/ENV/ofrep/v1/evaluate/flags[/KEY]).

local path
local count
local etags = {}
local requests = 0

function init(args)
    path = args[1]
    count = tonumber(args[2])
    if args[3] then
        for line in io.lines(args[3]) do
            local user, etag = line:match("^(%S+) (.+)$")
            etags[user] = etag
        end
    end
end

function request()
    requests = requests + 1
    local user = "known-" .. (requests % count)
    local headers = { ["Content-Type"] = "application/json" }
    if etags[user] then headers["If-None-Match"] = etags[user] end
    return wrk.format("POST", path, headers, '{"context": {"targetingKey": "' .. user .. '"}}')
end
