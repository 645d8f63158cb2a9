-- Bucketeer SDK polls of recorded users for the serve-user row, for wrk: each request POSTs the
-- get_evaluations body of one of COUNT users recorded beforehand (known-0 … known-COUNT-1), in
-- turn, with the key raw in Authorization as the SDK sends it. With TOKENS, a file of "USER TOKEN"
-- lines (each user's userEvaluationsId, fetched before the run), each poll presents the user's
-- current token: the "nothing changed" answer. Without, every poll is a fresh install's.
--
-- usage: wrk ... -s bucketeer.lua URL -- PATH COUNT KEY [TOKENS]

local path
local count
local key
local tokens = {}
local requests = 0

function init(args)
    path = args[1]
    count = tonumber(args[2])
    key = args[3]
    if args[4] then
        for line in io.lines(args[4]) do
            local user, token = line:match("^(%S+) (%S+)$")
            tokens[user] = token
        end
    end
end

function request()
    requests = requests + 1
    local user = "known-" .. (requests % count)
    local body = '{"sdkVersion": "2.2.1", "sourceId": 2, "tag": "", "user": {"data": {}, "id": "' .. user
        .. '"}, "userEvaluationCondition": {"evaluatedAt": "0", "userAttributesUpdated": false}, "userEvaluationsId": "'
        .. (tokens[user] or "") .. '"}'
    return wrk.format("POST", path, { ["Content-Type"] = "application/json", ["Authorization"] = key }, body)
end
