"""Known text for the OCR benchmark's rendered pages (written for it, no source).

The traditional Chinese pages are the simplified ones through OpenCC s2t.
"""

from __future__ import annotations

CHINESE = [
    "本合同由甲乙双方在平等自愿的基础上协商订立，双方应当遵守国家有关法律法规。甲"
    "方委托乙方开发企业知识管理系统，乙方应按照附件所列的功能要求完成开发、测试和"
    "部署工作，并在验收合格后提供为期十二个月的免费维护服务。合同总金额为人民币三"
    "十八万五千元整，分三期支付：签订合同后十个工作日内支付百分之三十，系统上线后"
    "支付百分之五十，验收合格满三个月后支付余款。任何一方未经对方书面同意，不得将"
    "本合同项下的权利和义务转让给第三方。因不可抗力导致合同无法履行的，双方均不承"
    "担违约责任，但应及时通知对方并提供相关证明。",
    "为加强公司文件的统一管理，提高检索效率，现就电子档案的归档要求通知如下。各部"
    "门应在每月最后一个工作日前，将本月形成的合同、会议纪要、技术方案和财务凭证扫"
    "描上传至档案系统，文件名称应包含日期、部门和文件类型。扫描件的分辨率不得低于"
    "每英寸二百点，页面应端正清晰，不得缺页或重复。涉及商业秘密的文件须标注密级，"
    "并限定查阅范围。档案管理员每季度对归档情况进行抽查，抽查结果将纳入部门年度考"
    "核。本通知自发布之日起执行，原有规定与本通知不一致的，以本通知为准。",
    "近年来，随着数字化转型的深入推进，越来越多的企业开始重视内部知识的沉淀与共享"
    "。一套好的知识库不仅能够减少重复劳动，还能帮助新员工快速熟悉业务流程。在建设"
    "过程中，首先要梳理现有文档的来源和格式，其次要确定统一的分类体系和权限规则，"
    "最后还要建立持续更新的机制，避免资料过时失效。实践表明，检索的准确率和响应速"
    "度是用户最关心的两项指标，而文档质量则直接决定了回答是否可信。因此，在导入扫"
    "描文件时，应当记录识别的置信度，对质量较差的页面进行人工复核。",
]

ENGLISH = [
    "This agreement is made between the supplier and the customer on the date of the "
    "last signature below. The supplier shall deliver the knowledge management "
    "system described in Schedule A, including installation, data migration and "
    "training for up to twenty staff members. Payment of the total fee of 48,500 "
    "dollars falls due in three instalments: 30 percent on signature, 50 percent on "
    "go-live and the balance ninety days after acceptance. Either party may "
    "terminate this agreement by written notice if the other party commits a "
    "material breach and fails to remedy it within thirty days. Neither party shall "
    "be liable for any delay caused by events beyond its reasonable control.",
    "All departments must upload their signed contracts, meeting minutes, technical "
    "proposals and receipts to the records system before the last working day of "
    "each month. File names should include the date, the department and the type of "
    "document. Scans must be at least 200 dots per inch, upright and legible, with "
    "no missing or duplicated pages. Documents containing trade secrets must carry a "
    "classification label, and access to them is limited to the people named on the "
    "label. The records officer checks a sample of each department's uploads every "
    "quarter, and the results form part of the annual review.",
    "A good knowledge base saves repeated work and helps new employees learn how the "
    "business runs. Building one starts with an inventory of the existing documents, "
    "their sources and their formats; then a single scheme of categories and access "
    "rules; and finally a routine that keeps the material current, so that nothing "
    "goes stale. Experience shows that users care most about two things: whether "
    "search finds the right passage, and how quickly it answers. The quality of the "
    "documents decides whether an answer can be trusted, which is why scanned pages "
    "should record how confident the recognition was, and poor pages should be "
    "checked by a person.",
]
