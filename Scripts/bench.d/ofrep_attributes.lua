-- OFREP evaluations of recorded users with attributes, for the serve-rules and rules-eval rows:
-- each request POSTs the context of one of COUNT users (PREFIX0 … PREFIX(COUNT-1)), in turn, with
-- MEMBERS (a JSON fragment such as "country": "DE") beside its targetingKey. The users' attributes
-- were kept by an untimed request with the same members, so every request is a read.
--
-- usage: wrk ... -s ofrep_attributes.lua URL -- PATH COUNT PREFIX MEMBERS

local path, count, prefix, members
local requests = 0

function init(args)
    path, count, prefix, members = args[1], tonumber(args[2]), args[3], args[4]
end

function request()
    requests = requests + 1
    local user = prefix .. (requests % count)
    return wrk.format("POST", path, { ["Content-Type"] = "application/json" },
        '{"context": {"targetingKey": "' .. user .. '", ' .. members .. '}}')
end
