-- The recorded users' GETs of the serve-user row, for wrk: each request asks for the pinned
-- document of one of COUNT users recorded beforehand (known-0 … known-COUNT-1), in turn.
--
-- usage: wrk ... -s user_known.lua URL -- PATH COUNT
-- PATH is the document's path (/t/TENANT/ENV/features.json).

local path
local count
local requests = 0

function init(args)
    path = args[1]
    count = tonumber(args[2])
end

function request()
    requests = requests + 1
    return wrk.format(nil, path .. "?user=known-" .. (requests % count))
end
