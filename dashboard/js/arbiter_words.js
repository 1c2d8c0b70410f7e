// The words of the arbiters' trade that the desk and the review page say alike: the roles (16), the colours, the
// results and their reasons (the engine's terminations), the penalties of the ladder, the sources of an incident
// and the incidents' kinds.  Each page adds its own words (useLanguage).

export const ARBITER_WORDS = {
  zh: {
    "role.arbiter": "裁判员", "role.deputy-chief": "副裁判长", "role.chief": "裁判长", "role.committee": "竞赛委员会",
    "role.reviewer": "审查组（只读）", "color.black": "黑", "color.white": "白", "result.win": "{color}胜", "result.draw": "和棋",
    "result.double": "双方判负", "source.detector": "检测器", "source.service": "服务", "source.arbiter": "裁判",
    "source.player": "棋手", "source.feed": "数据流", "penalty.warning": "警告", "penalty.violation": "违规",
    "penalty.loss": "判负", "penalty.disqualification": "取消资格", "penalty.why": "本局第 {n} 次违反第 {article} 条：{penalty}",
    "reason.five": "五连", "reason.forbidden-33": "禁手（三三）", "reason.forbidden-44": "禁手（四四）",
    "reason.forbidden-overline": "禁手（长连）", "reason.double-pass": "双方弃权", "reason.board-full": "满盘",
    "reason.resignation": "认输", "reason.agreed-draw": "协议和棋", "reason.time-forfeit": "超时",
    "reason.both-out-of-time": "双方超时", "reason.no-show": "未到场", "reason.reconnect-deadline": "未在时限内重连",
    "reason.penalty": "判罚", "reason.arbiter-decision": "裁判决定", "kind.earphones": "耳机", "kind.left-area": "离开比赛区域",
    "kind.extra-person": "区域内有他人", "kind.camera-covered": "摄像头被遮挡", "kind.camera-frozen": "画面静止",
    "kind.camera-lost": "摄像头断开", "kind.virtual-background": "虚拟背景", "kind.background-blurred": "背景虚化",
    "kind.feed-gap": "数据流缺口", "kind.clock-mismatch": "时钟不一致", "kind.result-mismatch": "结果不一致",
    "kind.platform-disagreement": "平台与规则不符", "kind.pairing-mismatch": "编排不符", "kind.leave-request": "申请离开",
    "kind.arbiter-call": "呼叫裁判", "kind.ear-check": "耳部检查", "kind.room-scan": "环境检查", "kind.pan-check": "转动检查",
  },
  en: {
    "role.arbiter": "arbiter", "role.deputy-chief": "deputy chief arbiter", "role.chief": "chief arbiter",
    "role.committee": "organising committee", "role.reviewer": "review panel (read only)", "color.black": "Black",
    "color.white": "White", "result.win": "{color} wins", "result.draw": "Draw", "result.double": "Both lose",
    "source.detector": "detector", "source.service": "service", "source.arbiter": "arbiter",
    "source.player": "player", "source.feed": "feed", "penalty.warning": "warning", "penalty.violation": "violation",
    "penalty.loss": "loss of the game", "penalty.disqualification": "disqualification",
    "reason.five": "five in a row", "reason.forbidden-33": "forbidden 3-3", "reason.forbidden-44": "forbidden 4-4",
    "reason.forbidden-overline": "forbidden overline", "reason.double-pass": "both passed",
    "reason.board-full": "board full", "reason.resignation": "resignation", "reason.agreed-draw": "agreed draw",
    "reason.time-forfeit": "time forfeit", "reason.both-out-of-time": "both out of time", "reason.no-show": "no-show",
    "reason.reconnect-deadline": "not back in time", "reason.penalty": "penalty",
    "reason.arbiter-decision": "arbiter's decision", "kind.earphones": "earphones", "kind.left-area": "left the area",
    "kind.extra-person": "another person", "kind.camera-covered": "camera covered",
    "kind.camera-frozen": "camera frozen", "kind.camera-lost": "camera lost",
    "kind.virtual-background": "virtual background", "kind.background-blurred": "blurred background",
    "kind.feed-gap": "feed gap", "kind.clock-mismatch": "clock mismatch", "kind.result-mismatch": "result mismatch",
    "kind.platform-disagreement": "platform vs rules", "kind.pairing-mismatch": "pairing mismatch",
    "kind.leave-request": "asks to leave", "kind.arbiter-call": "arbiter call", "kind.ear-check": "ear check",
    "kind.room-scan": "room scan", "kind.pan-check": "pan check",
  },
};
