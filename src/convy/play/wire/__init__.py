"""How convy reaches a declarative HTTP agent: what its file declares (spec), the protocol it
speaks (dialect: chat, responses, a2a), how a streamed answer is read (stream), its session
(session), OAuth2 (oauth), and one conversation with it (connection, agent)."""
